// Outputs that mix scales (issue 40): a detector-like [1, 84, 256] output,
// 4 rows of boxes in pixels and 80 rows of class scores around 1e-4, judged
// slice by slice along its axis 1.
#include "compare/slice_bands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compare/compare_sets.h"
#include "compare/judge.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kRows = 84, kAnchors = 256;

// Rows 0-3: boxes, |x| up to ~600 pixels; rows 4-83: sigmoid scores of
// logits around -9 (a detector's background prior): ~1e-4.
std::vector<float> Detector(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(kRows * kAnchors);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t a = 0; a < kAnchors; ++a)
      v[r * kAnchors + a] = r < 4 ? 320 + 150 * g(rng) : 1 / (1 + std::exp(9 - 0.5f * g(rng)));
  return v;
}

Tensor Out(const std::vector<float>& v) { return Tensor::FromVector(DType::kFloat32, {1, kRows, kAnchors}, v); }

// Every element moved by `rel` of its own value (fp32-like noise when tiny).
std::vector<float> Scaled(std::vector<float> v, int64_t from_row, int64_t to_row, float factor) {
  for (int64_t r = from_row; r < to_row; ++r)
    for (int64_t a = 0; a < kAnchors; ++a) v[r * kAnchors + a] *= factor;
  return v;
}

TensorComparison CompareOne(const Tensor& ref, const Tensor& test, const TolerancePolicy& policy,
                            bool slice_bands = true, const Tensor* noise = nullptr) {
  TensorSet r, t, n;
  EXPECT_TRUE(r.Add("output0", ref));
  EXPECT_TRUE(t.Add("output0", test));
  if (noise != nullptr) EXPECT_TRUE(n.Add("output0", *noise));
  auto out = CompareSets(r, t, {.policy = policy, .noise_reference = noise ? &n : nullptr, .slice_bands = slice_bands});
  EXPECT_TRUE(out.has_value());
  return out->tensors.at(0);
}

TEST(MixedScaleAxis, FindsTheAxisThatConcatenatesBoxesAndScores) {
  auto axis = FindMixedScaleAxis(Out(Detector(1)));
  ASSERT_TRUE(axis.has_value());
  EXPECT_EQ(axis->axis, 1);
  ASSERT_EQ(axis->slice_rms.size(), 84u);
  EXPECT_GT(axis->slice_rms[0], 100);
  EXPECT_LT(axis->slice_rms[4], 1e-3);
  EXPECT_GT(axis->gap, 1e5);
  const auto groups = ScaleGroups(axis->slice_rms);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(IndexRanges(groups[0]), "0-3");
  EXPECT_EQ(IndexRanges(groups[1]), "4-83");
}

TEST(MixedScaleAxis, NoneInAnOutputOfOneScaleNorInOneWithADeadChannel) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(8 * 64 * 32);
  for (float& x : v) x = g(rng) * (1 + std::fabs(g(rng)));  // channels within a few x of each other
  for (int k = 0; k < 64; ++k) v[5 * 64 + k] = 0;           // one channel (all of row 5) exactly zero
  for (int b = 0; b < 8; ++b)
    for (int k = 0; k < 32; ++k) v[(b * 64 + 7) * 32 + k] = 0;  // axis 1 index 7 zero too
  EXPECT_FALSE(FindMixedScaleAxis(Tensor::FromVector(DType::kFloat32, {8, 64, 32}, v)).has_value());
  // Slices of fewer than kMinSliceElements elements have no scale of their own: [1, 1000] logits.
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = i % 2 ? 1e-6f : 5.0f;
  EXPECT_FALSE(FindMixedScaleAxis(Tensor::FromVector(DType::kFloat32, {1, 1000}, logits)).has_value());
}

TEST(MixedScaleAxis, NoneInAFeatureMapWithScatteredNearDeadChannels) {
  // A raw SiLU map [1, 64, 16, 16]: most channels at rms ~3, channels 5, 33,
  // 47 and 60 near-dead (SiLU of values around -15: ~1e-6). The small ones
  // are no part concatenated to the rest: one band for the whole map.
  std::mt19937_64 rng(5);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(64 * 256);
  for (int c = 0; c < 64; ++c)
    for (int k = 0; k < 256; ++k) {
      const bool dead = c == 5 || c == 33 || c == 47 || c == 60;
      const float x = dead ? -15 + g(rng) : 3 * g(rng);
      v[c * 256 + k] = x / (1 + std::exp(-x));
    }
  EXPECT_FALSE(FindMixedScaleAxis(Tensor::FromVector(DType::kFloat32, {1, 64, 16, 16}, v)).has_value());
  EXPECT_FALSE(LargestScaleIsAPart({3, 3, 1e-6, 3, 3, 1e-6, 3}));  // the large scale in three runs
  EXPECT_TRUE(LargestScaleIsAPart({300, 300, 1e-3, 1e-3, 1e-6, 1e-3}));  // boxes, then scores
  EXPECT_TRUE(LargestScaleIsAPart({1, 1e-4, 1e-4, 1}));  // two runs: still parts
}

TEST(MixedScaleAxis, SlicesKeepOrderAndNamesRanges) {
  std::vector<float> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor s = SliceAlong(Tensor::FromVector(DType::kFloat32, {2, 3, 4}, v), 1, 2);
  ASSERT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_EQ(s.GetAsDouble(0), 8);
  EXPECT_EQ(s.GetAsDouble(4), 20);
  EXPECT_EQ(IndexRanges({0, 1, 2, 5, 7, 8}), "0-2, 5, 7-8");
  EXPECT_EQ(LargestScaleGap({0, 1, 2, 400}), 200);
}

TEST(SliceBands, ScoresOffBy15PercentFailTheirOwnBandThoughTheOutputsBandSwallowsThem) {
  const auto ref = Detector(1);
  const Tensor r = Out(ref), t = Out(Scaled(ref, 4, kRows, 1.15f));
  // One band for the output (1e-4 x its rms, ~1.5e-2) is ~100x the largest score: it passes.
  EXPECT_EQ(CompareOne(r, t, {}, /*slice_bands=*/false).status, Verdict::kPass);
  const TensorComparison c = CompareOne(r, t, {});
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_THAT(c.reason, HasSubstr("80 of 84 slices along axis 1 outside their own band"));
  ASSERT_TRUE(c.tolerance.slices.has_value());
  const SliceBands& b = *c.tolerance.slices;
  EXPECT_EQ(b.axis, 1);
  EXPECT_EQ(b.failed, 80);
  ASSERT_EQ(b.parts.size(), 2u);
  EXPECT_EQ(b.parts[0].slices, "0-3");
  EXPECT_EQ(b.parts[0].failed, 0);
  EXPECT_EQ(b.parts[1].slices, "4-83");
  EXPECT_EQ(b.parts[1].failed, 80);
  // 1e-4 x the scores' own rms (~1e-8) is below the floor of scores in [0, 1]: 8 ulps of 1.
  EXPECT_DOUBLE_EQ(b.parts[1].atol_max, kSliceFloorUlps * 0x1p-23);
  EXPECT_THAT(c.tolerance.Why(), HasSubstr("mixed scales along axis 1"));
}

TEST(SliceBands, Float32NoiseOnEitherPartPasses) {
  const auto ref = Detector(1);
  // Rounding-sized changes: the boxes by 2e-6 of their value (~1e-3 pixel, more than the largest score), the
  // scores by 2e-6 of theirs.
  auto noisy = Scaled(Scaled(ref, 0, 4, 1 + 2e-6f), 4, kRows, 1 - 2e-6f);
  // And the scores' own absolute error: a sigmoid computed at the scale of 1 (ORT's fused and unfused runs
  // differ by 2^-23 on scores of 1e-4).
  for (int64_t i = 4 * kAnchors; i < kRows * kAnchors; i += 3) noisy[i] += 0x1p-23f;
  const Tensor r = Out(ref), t = Out(noisy);
  const TensorComparison c = CompareOne(r, t, {});
  EXPECT_EQ(c.status, Verdict::kPass) << c.reason;
  ASSERT_TRUE(c.tolerance.slices.has_value());
  EXPECT_EQ(c.metrics.mismatches, 0);
}

TEST(SliceBands, AFixedBandTheUserGaveIsNeverSplit) {
  const auto ref = Detector(1);
  TolerancePolicy p;
  p.global.atol = 1e-2;
  const TensorComparison c = CompareOne(Out(ref), Out(Scaled(ref, 4, kRows, 1.15f)), p);
  EXPECT_EQ(c.status, Verdict::kPass);
  EXPECT_FALSE(c.tolerance.slices.has_value());
}

TEST(SliceBands, ACappedStepBandFailsScoresASaturatingScaleZeroesAndPassesHealthyOnes) {
  // A QDQ output rule: 4 steps of one output scale 2.498 (atol 9.99), capped at 1/4 of the reference's rms.
  TolerancePolicy p;
  p.rules.push_back({.pattern = "output0", .atol = 9.99, .rtol = 0.0, .quantile = 0.95,
                     .decide_by = Statistic::kQuantile, .mode = ToleranceMode::kFixed, .reference_fraction = 0.25});
  const auto ref = Detector(1);
  const TensorComparison saturated = CompareOne(Out(ref), Out(Scaled(ref, 4, kRows, 0)), p);
  EXPECT_EQ(saturated.status, Verdict::kFail);
  EXPECT_THAT(saturated.reason, HasSubstr("slices along axis 1"));
  ASSERT_TRUE(saturated.tolerance.slices.has_value());
  EXPECT_EQ(saturated.tolerance.slices->parts[1].failed, 80);
  EXPECT_THAT(saturated.tolerance.slices->parts[1].rule, HasSubstr("capped at 0.25 x rms(ref)"));
  // Without the cap the steps read from the model itself pass it.
  p.rules[0].reference_fraction.reset();
  EXPECT_EQ(CompareOne(Out(ref), Out(Scaled(ref, 4, kRows, 0)), p).status, Verdict::kPass);
  // A healthy copy: boxes within 2 pixels, scores within 5%.
  p.rules[0].reference_fraction = 0.25;
  std::vector<float> healthy = ref;
  for (int64_t i = 0; i < kRows * kAnchors; ++i) healthy[i] += i < 4 * kAnchors ? (i % 3 - 1) * 2.0f : 0.05f * ref[i] * (i % 3 - 1);
  const TensorComparison ok = CompareOne(Out(ref), Out(healthy), p);
  EXPECT_EQ(ok.status, Verdict::kPass) << ok.reason;
}

TEST(SliceBands, ACappedBandBindsOnAWholeOutputToo) {
  // A [4, 100] classifier output scaled to zero by a coarse scale: no mixed axis, the cap on the whole decides.
  std::mt19937_64 rng(5);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(400);
  for (float& x : v) x = 0.1f * g(rng);
  TolerancePolicy p;
  p.rules.push_back({.pattern = "output0", .atol = 1.0, .rtol = 0.0, .quantile = 0.95,
                     .decide_by = Statistic::kQuantile, .mode = ToleranceMode::kFixed, .reference_fraction = 0.25});
  const TensorComparison c =
      CompareOne(Tensor::FromVector(DType::kFloat32, {4, 100}, v),
                 Tensor::FromVector(DType::kFloat32, {4, 100}, std::vector<float>(400, 0.0f)), p);
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_FALSE(c.tolerance.slices.has_value());
  EXPECT_LT(c.tolerance.tolerance.atol, 0.03);
  EXPECT_THAT(c.tolerance.Why(), HasSubstr("capped by the reference"));
}

TEST(SliceBands, CalibratedBandsComeFromEachSlicesOwnSecondReference) {
  // The second reference (fp64) differs from the first by 1e-7 relative: each slice's band is 10x its own
  // noise, at least the floor. Scores 5% off fail; the whole output's calibrated band passes them.
  const auto ref = Detector(2);
  const Tensor r = Out(ref), noise = Out(Scaled(ref, 0, kRows, 1 + 1e-7f));
  TolerancePolicy p{.mode = ToleranceMode::kCalibrated};
  EXPECT_EQ(CompareOne(r, Out(Scaled(ref, 4, kRows, 1.05f)), p, true, &noise).status, Verdict::kFail);
  EXPECT_EQ(CompareOne(r, Out(Scaled(ref, 4, kRows, 1.05f)), p, false, &noise).status, Verdict::kPass);
  const TensorComparison ok = CompareOne(r, Out(Scaled(ref, 0, kRows, 1 + 2e-7f)), p, true, &noise);
  EXPECT_EQ(ok.status, Verdict::kPass) << ok.reason;
  ASSERT_TRUE(ok.tolerance.slices.has_value());
  EXPECT_THAT(ok.tolerance.slices->parts[1].rule, HasSubstr("calibrated"));
}

TEST(SliceBands, TheCapIsARuleFieldOnTheCommandLineAndInJson) {
  auto rule = ParseToleranceRule("output0:atol=9.99,cap=0.25");
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->reference_fraction, 0.25);
  TolerancePolicy p;
  p.rules.push_back(*rule);
  auto back = TolerancePolicyFromJson(TolerancePolicyToJson(p));
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->rules.size(), 1u);
  EXPECT_EQ(back->rules[0].reference_fraction, 0.25);
  EXPECT_FALSE(ParseToleranceRule("output0:cap=-1").has_value());
}

}  // namespace
}  // namespace parity
