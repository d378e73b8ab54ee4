#include "compare/set_valued.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "compare/compare_sets.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

// Post-NMS detections: boxes [N, 4], scores [N] (descending), labels [N].
TensorSet Detections(int n, int drop = -1, int relabel = -1) {
  std::vector<float> boxes, scores;
  std::vector<int64_t> labels;
  for (int i = 0; i < n; ++i) {
    if (i == drop) continue;
    const float x = 10.0f * i;
    boxes.insert(boxes.end(), {x, x, x + 20, x + 30});
    scores.push_back(0.9f - 0.01f * i);
    labels.push_back(i == relabel ? 99 : i % 5);
  }
  const int64_t rows = static_cast<int64_t>(scores.size());
  TensorSet s;
  s.Set("boxes", Tensor::FromVector(DType::kFloat32, {rows, 4}, boxes));
  s.Set("scores", Tensor::FromVector(DType::kFloat32, {rows}, scores));
  s.Set("labels", Tensor::FromVector(DType::kInt64, {rows}, labels));
  return s;
}

const SetValuedGroup kGroup{.source = "NonMaxSuppression 'nms'",
                            .outputs = {"boxes", "scores", "labels"},
                            .score = "scores",
                            .boxes = "boxes"};

// One box more at the score threshold (pytorch#134827): a structural FAIL
// element by element, a pass as a set, with the extra row listed.
TEST(SetValued, OneBoxAtTheThresholdPassesAsASet) {
  const TensorSet ref = Detections(20, /*drop=*/19), test = Detections(20);
  auto plain = CompareSets(ref, test, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->passed());
  auto as_set = CompareSets(ref, test, {.set_groups = {kGroup}});
  ASSERT_TRUE(as_set.has_value());
  EXPECT_TRUE(as_set->passed());
  const std::string why = as_set->tensors[0].tolerance.Why();
  EXPECT_THAT(why, HasSubstr("matched as a set: 19 of 19 reference rows (20 test rows)"));
  EXPECT_THAT(why, HasSubstr("test row 19 (among the lowest-scored)"));
}

TEST(SetValued, AHighScoredBoxMissingOrRelabelledFails) {
  const TensorSet ref = Detections(20);
  auto missing = MatchRows(kGroup, ref, Detections(20, /*drop=*/0), {});
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->passed);
  EXPECT_THAT(missing->Describe(), HasSubstr("reference row 0 (rank 1 of 20)"));
  auto relabelled = CompareSets(ref, Detections(20, -1, /*relabel=*/3), {.set_groups = {kGroup}});
  ASSERT_TRUE(relabelled.has_value());
  EXPECT_FALSE(relabelled->passed());
  // The same rows in another order are the same set.
  auto same = MatchRows(kGroup, ref, ref, {});
  ASSERT_TRUE(same.has_value());
  EXPECT_TRUE(same->passed);
  EXPECT_EQ(same->matched, 20);
}

}  // namespace
}  // namespace parity
