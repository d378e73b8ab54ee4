#include "compare/compare_sets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/testing/random_tensor.h"

namespace parity {
namespace {

using testing::F32;

TEST(CompareSets, ReportsMissingExtraShapeAndDtypeWithBothSides) {
  TensorSet ref, test;
  ASSERT_TRUE(ref.Add("a", F32({2}, {1, 2})));
  ASSERT_TRUE(ref.Add("b", F32({2}, {1, 2})));
  ASSERT_TRUE(ref.Add("c", F32({2}, {1, 2})));
  ASSERT_TRUE(ref.Add("d", F32({2}, {1, 2})));
  ASSERT_TRUE(test.Add("a", F32({2}, {1, 2})));
  ASSERT_TRUE(test.Add("c", F32({1, 2}, {1, 2})));
  ASSERT_TRUE(test.Add("d", Tensor::FromVector(DType::kFloat64, {2}, std::vector<double>{1, 2})));
  ASSERT_TRUE(test.Add("e", F32({2}, {1, 2})));
  auto out = CompareSets(ref, test, {});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->findings.size(), 4u);
  EXPECT_EQ(FindingKindName(out->findings[0].kind), "missing");
  EXPECT_EQ(out->findings[0].name, "b");
  EXPECT_EQ(out->findings[0].reference, "float32 [2]");
  EXPECT_EQ(out->findings[0].test, "absent");
  EXPECT_EQ(FindingKindName(out->findings[1].kind), "shape");
  EXPECT_EQ(out->findings[1].test, "float32 [1, 2]");
  EXPECT_EQ(FindingKindName(out->findings[2].kind), "dtype");
  EXPECT_EQ(out->findings[2].test, "float64 [2]");
  EXPECT_EQ(FindingKindName(out->findings[3].kind), "extra");
  EXPECT_EQ(out->findings[3].name, "e");
  EXPECT_FALSE(out->passed());
  EXPECT_EQ(out->tensors[0].status, Verdict::kPass);
  EXPECT_EQ(out->tensors[1].status, Verdict::kUnchecked);  // missing
  EXPECT_EQ(out->tensors[2].status, Verdict::kUnchecked);  // shape: no silent reshape
  EXPECT_EQ(out->tensors[3].status, Verdict::kPass);       // dtype: still measured, finding fails
}

TEST(CompareSets, MatchesByExactNameAndRenamesOnlyThroughTheMap) {
  TensorSet ref, test;
  ASSERT_TRUE(ref.Add("logits", F32({2}, {1, 2})));
  ASSERT_TRUE(test.Add("output_0", F32({2}, {1, 2})));
  auto plain = CompareSets(ref, test, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->passed());  // no fuzzy matching
  auto mapped = CompareSets(ref, test, {.rename = {{"logits", "output_0"}}});
  ASSERT_TRUE(mapped.has_value());
  EXPECT_TRUE(mapped->passed());
  EXPECT_EQ(mapped->tensors[0].test_name, "output_0");
  auto typo = CompareSets(ref, test, {.rename = {{"logit", "output_0"}}});
  ASSERT_TRUE(typo.has_value());
  EXPECT_EQ(FindingKindName(typo->findings[0].kind), "map");
  auto parsed = ParseRename("logits=output_0");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->second, "output_0");
  EXPECT_FALSE(ParseRename("logits").has_value());
  EXPECT_FALSE(ParseRename("=x").has_value());
}

TEST(CompareSets, FailsOnAOneSidedNaNAndNamesTheWorstElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorSet ref, test;
  ASSERT_TRUE(ref.Add("y", F32({2, 2}, {1, nan, 3, 4})));
  ASSERT_TRUE(test.Add("y", F32({2, 2}, {1, nan, 3.5f, nan})));
  auto out = CompareSets(ref, test, {});
  ASSERT_TRUE(out.has_value());
  const TensorComparison& c = out->tensors[0];
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_EQ(c.metrics.nan_mismatch, 1);
  EXPECT_EQ(c.metrics.nan_equal, 1);
  EXPECT_EQ(c.metrics.mismatches, 2);
  EXPECT_EQ(c.metrics.max_abs_index, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(c.metrics.ref_at_max, 3);
  EXPECT_EQ(c.metrics.test_at_max, 3.5);
}

// An all-NaN output has no finite pair: its cosine and SNR are undefined
// (NaN, "nan" in JSON), never the 1 and +inf of "identical" beside a failing
// verdict; NaN on both sides everywhere is equal and stays 1 / +inf.
TEST(CompareSets, AnAllNaNOutputHasNoCosineOrSnrThatReadsAsIdentical) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorSet ref, test;
  ASSERT_TRUE(ref.Add("y", F32({3}, {1, 2, 3})));
  ASSERT_TRUE(test.Add("y", F32({3}, {nan, nan, nan})));
  ASSERT_TRUE(ref.Add("z", F32({2}, {nan, nan})));
  ASSERT_TRUE(test.Add("z", F32({2}, {nan, nan})));
  auto out = CompareSets(ref, test, {});
  ASSERT_TRUE(out.has_value());
  const TensorComparison& y = out->tensors[0].name == "y" ? out->tensors[0] : out->tensors[1];
  const TensorComparison& z = out->tensors[0].name == "y" ? out->tensors[1] : out->tensors[0];
  EXPECT_EQ(y.status, Verdict::kFail);
  EXPECT_TRUE(std::isnan(y.metrics.cosine)) << y.metrics.cosine;
  EXPECT_TRUE(std::isnan(y.metrics.snr_db)) << y.metrics.snr_db;
  EXPECT_EQ(z.status, Verdict::kPass);
  EXPECT_EQ(z.metrics.cosine, 1);
  EXPECT_EQ(z.metrics.snr_db, std::numeric_limits<double>::infinity());
}

TEST(ComputeMetrics, GivesTheSameBitsForAnyThreadCount) {
  const int64_t n = (int64_t{1} << 21) + 12345;
  Tensor r(DType::kFloat32, {n}), t(DType::kFloat32, {n});
  auto rv = r.mutable_view<float>();
  auto tv = t.mutable_view<float>();
  for (int64_t i = 0; i < n; ++i) {
    rv[i] = std::sin(0.001f * static_cast<float>(i));
    tv[i] = rv[i] + 1e-6f * std::cos(0.37f * static_cast<float>(i));
  }
  tv[n - 5] = std::numeric_limits<float>::infinity();  // one slow block
  auto one = ComputeMetrics(r, t, {.atol = 1e-4, .rtol = 1e-3, .threads = 1});
  auto two = ComputeMetrics(r, t, {.atol = 1e-4, .rtol = 1e-3, .threads = 2});
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->rmse, two->rmse);
  EXPECT_EQ(one->cosine, two->cosine);
  EXPECT_EQ(one->ref_std, two->ref_std);
  EXPECT_EQ(one->max_abs_flat_index, two->max_abs_flat_index);
  EXPECT_EQ(one->histogram, two->histogram);
  EXPECT_EQ(one->inf_test, 1);
}

TEST(ComputeMetrics, RejectsDifferentCountsAndNegativeTolerances) {
  EXPECT_FALSE(ComputeMetrics(F32({2}, {1, 2}), F32({1}, {1}), {}).has_value());
  EXPECT_FALSE(ComputeMetrics(F32({1}, {1}), F32({1}, {1}), {.atol = -1}).has_value());
  EXPECT_FALSE(ComputeMetrics(F32({1}, {1}), Tensor::FromStrings({1}, {"a"}), {}).has_value());
}

TEST(ComputeMetrics, ComparesLargeInt64Exactly) {
  const int64_t big = int64_t{1} << 60;
  auto r = Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{big, -big});
  auto t = Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{big + 1, -big});
  auto m = ComputeMetrics(r, t, {});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mismatches, 1);  // 2^60 and 2^60+1 are the same double, yet differ
  EXPECT_EQ(m->max_abs, 1);
  EXPECT_EQ(m->max_abs_flat_index, 0);
}

}  // namespace
}  // namespace parity
