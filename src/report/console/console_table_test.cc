#include "report/console/console_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "compare/judge.h"

namespace parity {
namespace {

TensorComparison Row(Verdict status, double max_abs, double max_ref, double ref_at_max) {
  TensorComparison c;
  c.status = status;
  c.metrics.count = 4;
  c.metrics.max_abs = max_abs;
  c.metrics.ref_min = -max_ref;
  c.metrics.ref_max = max_ref;
  c.metrics.ref_at_max = ref_at_max;
  c.tolerance.tolerance = {.atol = 1e-4, .rtol = 1e-3};
  c.score = ErrorScore(c.metrics, c.tolerance.tolerance);  // as the judge scores it (TakeJudgment)
  return c;
}

// Rows are ordered by the judge's error score (TensorComparison::score), not by
// the band of the worst element: `big`'s worst element is a near-zero value
// of a tensor that reaches 100, so against its own element's band it looks
// worse (0.9) than `tiny` (0.45), while its error score (band at max|ref|) is
// 9e-4.
TEST(ConsoleTable, RowsFollowTheErrorScoreWithFailuresFirst) {
  const TensorComparison big = Row(Verdict::kPass, 9e-5, 100, 0);        // score 9e-5 / 0.1001
  const TensorComparison tiny = Row(Verdict::kPass, 5e-5, 0.01, 0.01);  // score 5e-5 / 1.1e-4
  const TensorComparison failed = Row(Verdict::kFail, 1e-6, 1, 1);
  const TensorComparison unchecked = Row(Verdict::kUnchecked, 1, 1, 1);
  EXPECT_GT(ErrorScore(tiny.metrics, tiny.tolerance.tolerance), ErrorScore(big.metrics, big.tolerance.tolerance));
  EXPECT_TRUE(WorseRow(tiny, big));
  EXPECT_FALSE(WorseRow(big, tiny));
  EXPECT_TRUE(WorseRow(failed, tiny));  // a failure above any pass, whatever its score
  EXPECT_TRUE(WorseRow(big, unchecked));
  EXPECT_FALSE(WorseRow(unchecked, unchecked));
  std::vector<const TensorComparison*> rows{&unchecked, &big, &failed, &tiny};
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return WorseRow(*a, *b); });
  EXPECT_EQ(rows, (std::vector<const TensorComparison*>{&failed, &tiny, &big, &unchecked}));
}

}  // namespace
}  // namespace parity
