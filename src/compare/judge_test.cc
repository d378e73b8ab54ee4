#include "compare/judge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compare/compare_sets.h"
#include "core/testing/random_tensor.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

using testing::F32;

// A fixed band decided by the max: the score's edge is the verdict's edge.
TolerancePolicy FixedMax(double atol, double rtol) {
  TolerancePolicy p;
  p.mode = ToleranceMode::kFixed;
  p.global.atol = atol;
  p.global.rtol = rtol;
  p.global.decide_by = Statistic::kMax;
  return p;
}

TEST(JudgeTensor, ScoresOneAtTheBandEdgeAndPassesThere) {
  auto j = JudgeTensor("y", F32({2}, {0, 0}), F32({2}, {0.5f, 0}), FixedMax(0.5, 0));
  ASSERT_TRUE(j.has_value());
  EXPECT_DOUBLE_EQ(j->score, 1.0);
  EXPECT_TRUE(j->passed()) << j->reason;
}

TEST(JudgeTensor, ScoresAboveOneAndFailsPastTheBandEdge) {
  auto j = JudgeTensor("y", F32({2}, {0, 0}), F32({2}, {0.75f, 0}), FixedMax(0.5, 0));
  ASSERT_TRUE(j.has_value());
  EXPECT_DOUBLE_EQ(j->score, 1.5);
  EXPECT_FALSE(j->passed());
  EXPECT_THAT(j->reason, HasSubstr("max_abs"));
}

TEST(JudgeTensor, ScoreTakesTheRelativeBandAtMaxAbsReference) {
  // band = rtol * max|ref| = 0.5 * 4, whatever element the worst error sits at.
  auto j = JudgeTensor("y", F32({2}, {2, -4}), F32({2}, {0, -4}), FixedMax(0, 0.5));
  ASSERT_TRUE(j.has_value());
  EXPECT_DOUBLE_EQ(j->score, 1.0);
  EXPECT_TRUE(j->passed()) << j->reason;
}

TEST(JudgeTensor, NanMismatchScoresInfinityAndFails) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto j = JudgeTensor("y", F32({2}, {1, 2}), F32({2}, {nan, 2}), FixedMax(1e3, 0));
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(std::isinf(j->score));
  EXPECT_FALSE(j->passed());
  EXPECT_THAT(j->reason, HasSubstr("NaN/Inf"));
}

TEST(JudgeTensor, InfMismatchScoresInfinityAndFailsElementwise) {
  const float inf = std::numeric_limits<float>::infinity();
  TolerancePolicy p;
  p.mode = ToleranceMode::kFixed;
  auto j = JudgeTensor("y", F32({2}, {1, 2}), F32({2}, {inf, 2}), p);
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(std::isinf(j->score));
  EXPECT_FALSE(j->passed());
}

TEST(JudgeTensor, MatchingNanAndInfPass) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  TolerancePolicy p;
  p.mode = ToleranceMode::kFixed;
  auto j = JudgeTensor("y", F32({3}, {nan, inf, 1}), F32({3}, {nan, inf, 1}), p);
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(j->passed()) << j->reason;
  EXPECT_EQ(j->score, 0);
}

TEST(JudgeTensor, ZeroBandScoresZeroWhenEqualAndInfinityOtherwise) {
  const auto ints = [](std::vector<int32_t> v) { return Tensor::FromVector(DType::kInt32, {2}, v); };
  auto same = JudgeTensor("i", ints({1, 2}), ints({1, 2}), {});
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->score, 0);
  EXPECT_TRUE(same->passed());
  auto off = JudgeTensor("i", ints({1, 2}), ints({1, 3}), {});
  ASSERT_TRUE(off.has_value());
  EXPECT_TRUE(std::isinf(off->score));
  EXPECT_FALSE(off->passed());
}

TEST(JudgeTensor, LowerPrecisionTestIsJudgedByItsOwnDtypeDefault) {
  // A float16 run against its float32 reference: the float16 rtol (1e-2), not float32's.
  TolerancePolicy p;
  p.mode = ToleranceMode::kFixed;
  const Tensor ref = F32({2}, {1, 2});
  const Tensor half = Tensor::FromVector(DType::kFloat16, {2}, std::vector<uint16_t>{FloatToHalf(1.00390625f),
                                                                                     FloatToHalf(2)});
  auto j = JudgeTensor("y", ref, half, p);
  ASSERT_TRUE(j.has_value());
  EXPECT_DOUBLE_EQ(j->tolerance.tolerance.rtol, 1e-2);
  EXPECT_TRUE(j->passed()) << j->reason;
  // The same difference in float32 fails float32's band.
  auto f = JudgeTensor("y", ref, F32({2}, {1.00390625f, 2}), p);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->passed());
}

TEST(JudgeTensor, ShapeDifferenceFailsWithInfiniteScoreAndNoMetrics) {
  auto j = JudgeTensor("y", F32({2}, {1, 2}), F32({1, 2}, {1, 2}), {});
  ASSERT_TRUE(j.has_value());
  EXPECT_FALSE(j->passed());
  EXPECT_TRUE(std::isinf(j->score));
  EXPECT_EQ(j->reason, "shape [1, 2] differs from the reference's [2]");
  EXPECT_EQ(j->metrics.count, 0);
}

TEST(JudgeTensor, StringAgainstNumberFailsNamingBothDtypes) {
  auto j = JudgeTensor("y", Tensor::FromStrings({1}, {"a"}), F32({1}, {1}), {});
  ASSERT_TRUE(j.has_value());
  EXPECT_FALSE(j->passed());
  EXPECT_EQ(j->reason, "dtype float32 differs from the reference's string");
}

TEST(JudgeTensor, DefaultPolicyMatchesCompareSets) {
  // compare and locate judge a tensor the same way: same tolerance, same verdict.
  const Tensor ref = F32({4}, {1, -2, 3, 0.5f});
  const Tensor test = F32({4}, {1, -2, 3.001f, 0.5f});
  TensorSet r, t;
  ASSERT_TRUE(r.Add("y", ref));
  ASSERT_TRUE(t.Add("y", test));
  auto set = CompareSets(r, t, {});
  auto j = JudgeTensor("y", ref, test, {});
  ASSERT_TRUE(set.has_value() && j.has_value());
  EXPECT_EQ(set->tensors[0].reason, j->reason);
  EXPECT_EQ(set->tensors[0].tolerance.tolerance.atol, j->tolerance.tolerance.atol);
  EXPECT_EQ(set->tensors[0].metrics.mismatches, j->metrics.mismatches);
}

TEST(ErrorScore, IsMaxAbsOverTheBandAtMaxAbsReference) {
  TensorMetrics m;
  m.max_abs = 3;
  m.ref_min = -10;
  m.ref_max = 2;
  EXPECT_DOUBLE_EQ(ErrorScore(m, {.atol = 1, .rtol = 0.2}), 1.0);  // 3 / (1 + 0.2 * 10)
}

TEST(QuantSteps, Float16StepIsTheSpacingAtTheLargestReference) {
  EXPECT_DOUBLE_EQ(Float16Step(1.0), std::ldexp(1.0, -10));
  EXPECT_DOUBLE_EQ(Float16Step(1.9), std::ldexp(1.0, -10));
  EXPECT_DOUBLE_EQ(Float16Step(1000.0), 0.5);  // fp16 numbers in [512, 1024) are 0.5 apart
  EXPECT_DOUBLE_EQ(Float16Step(0.0), std::ldexp(1.0, -24));
}

TEST(QuantSteps, MaxStepsCountsTheErrorInStepsOfTheScale) {
  TensorMetrics m;
  m.max_abs = 0.8;
  EXPECT_DOUBLE_EQ(MaxSteps(m, 0.4), 2.0);
  m.max_abs = 0;
  EXPECT_EQ(MaxSteps(m, 0), 0);
  m.max_abs = 1;
  EXPECT_TRUE(std::isinf(MaxSteps(m, 0)));
  m.nan_mismatch = 1;
  EXPECT_TRUE(std::isinf(MaxSteps(m, 0.4)));
}

}  // namespace
}  // namespace parity
