#include "compare/tolerance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compare/compare_sets.h"
#include "core/testing/random_tensor.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

using testing::F32;

std::vector<float> Noise(size_t n, uint64_t seed, float scale, float offset = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(n);
  for (float& x : v) x = offset + scale * g(rng);
  return v;
}

// Compares one output named "y" under `policy` and returns its verdict.
TensorComparison JudgeY(const Tensor& ref, const Tensor& test, TolerancePolicy policy,
                            const Tensor* noise = nullptr) {
  TensorSet r, t, n;
  EXPECT_TRUE(r.Add("y", ref));
  EXPECT_TRUE(t.Add("y", test));
  if (noise) {
    EXPECT_TRUE(n.Add("y", *noise));
  }
  auto out = CompareSets(r, t, {.policy = policy, .noise_reference = noise ? &n : nullptr});
  EXPECT_TRUE(out.has_value());
  return out->tensors.at(0);
}

TEST(AdaptiveTolerance, CatchesAProbabilityErrorAFixedAtolPasses) {
  // Softmax over 1000 classes: each probability ~1e-3; a 5% error on each
  // (5e-5, alternating sign, so rows still sum to 1) is far below atol 1e-4.
  const int k = 1000;
  std::vector<float> p(4 * k), q(4 * k);
  auto logits = Noise(4 * k, 1, 0.1f);
  for (int row = 0; row < 4; ++row) {
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += std::exp(logits[row * k + j]);
    for (int j = 0; j < k; ++j) {
      p[row * k + j] = static_cast<float>(std::exp(logits[row * k + j]) / sum);
      q[row * k + j] = p[row * k + j] + (j % 2 ? 5e-5f : -5e-5f);
    }
  }
  const Tensor ref = F32({4, k}, p), test = F32({4, k}, q);
  EXPECT_EQ(JudgeY(ref, test, {.mode = ToleranceMode::kFixed}).status, Verdict::kPass);  // fixed misses it
  TensorComparison c = JudgeY(ref, test, {.mode = ToleranceMode::kAdaptive});
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_THAT(c.tolerance.rules_fired.back(), HasSubstr("probabilities"));
  EXPECT_THAT(c.tolerance.rules_fired.back(), HasSubstr("axis 1 of 1000"));
  // The same output without the error passes adaptive too.
  EXPECT_EQ(JudgeY(ref, ref, {.mode = ToleranceMode::kAdaptive}).status, Verdict::kPass);
}

TEST(AdaptiveTolerance, TightensANearConstantOutput) {
  // 0.5 + 1e-6 noise: the test lost all the variation (a constant 0.5),
  // which atol 1e-4 + rtol 1e-3*0.5 cannot see.
  const auto v = Noise(1000, 2, 1e-6f, 0.5f);
  const Tensor ref = F32({1000}, v), test = F32({1000}, std::vector<float>(1000, 0.5f));
  EXPECT_EQ(JudgeY(ref, test, {.mode = ToleranceMode::kFixed}).status, Verdict::kPass);
  TensorComparison c = JudgeY(ref, test, {.mode = ToleranceMode::kAdaptive});
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_THAT(c.tolerance.rules_fired.back(), HasSubstr("near-constant"));
  EXPECT_EQ(c.tolerance.tolerance.rtol, 0);
  // Rounding-level differences still pass.
  std::vector<float> w = v;
  for (float& x : w) x = std::nextafter(x, 1.0f);
  EXPECT_EQ(JudgeY(ref, F32({1000}, w), {.mode = ToleranceMode::kAdaptive}).status, Verdict::kPass);
}

TEST(CalibratedTolerance, TheNoiseFloorDecides) {
  const auto v = Noise(1000, 3, 1.0f);
  const Tensor ref = F32({1000}, v);
  auto shifted = [&](float by, uint64_t seed, bool random) {
    auto n = Noise(1000, seed, by);
    std::vector<float> w = v;
    for (size_t i = 0; i < w.size(); ++i) w[i] += random ? n[i] : by;
    return F32({1000}, w);
  };
  const TolerancePolicy calibrated{.mode = ToleranceMode::kCalibrated};
  // A quiet noise floor (1e-6): an error of 5e-5 passes the fixed default but not 10x the floor.
  const Tensor quiet = shifted(1e-6f, 4, true), error = shifted(5e-5f, 0, false);
  EXPECT_EQ(JudgeY(ref, error, {.mode = ToleranceMode::kFixed}).status, Verdict::kPass);
  TensorComparison c = JudgeY(ref, error, calibrated, &quiet);
  EXPECT_EQ(c.status, Verdict::kFail);
  EXPECT_THAT(c.tolerance.rules_fired.back(), HasSubstr("the reference's own error"));
  // A loud noise floor (1e-3, e.g. fp16 vs fp32): an error of 5e-3 is within 10x of it.
  const Tensor loud = shifted(1e-3f, 5, true), big = shifted(5e-3f, 0, false);
  EXPECT_EQ(JudgeY(ref, big, {.mode = ToleranceMode::kFixed}).status, Verdict::kFail);
  EXPECT_EQ(JudgeY(ref, big, calibrated, &loud).status, Verdict::kPass);
  // Without a second reference it says so and falls back to the scaled band.
  const auto fallback = JudgeY(ref, big, calibrated).tolerance.rules_fired;
  EXPECT_THAT(fallback.at(fallback.size() - 2), HasSubstr("no second reference"));
  EXPECT_THAT(fallback.back(), HasSubstr("scaled"));
}

// The default (scaled) band follows the output's magnitude: at every scale
// from 1e-9 to 1e4 a float32 rounding-level difference passes and a change of
// 1% of the output's rms fails.
TEST(ScaledTolerance, PassesRoundingAndFailsOnePercentAtEveryScale) {
  for (double scale : {1e-9, 1e-6, 1e-3, 1.0, 1e2, 1e4}) {
    SCOPED_TRACE(scale);
    auto v = Noise(4096, 7, 1.0f);
    for (float& x : v) x = static_cast<float>(x * scale);
    const Tensor ref = F32({4096}, v);
    std::vector<float> rounded = v, shifted = v;
    auto jitter = Noise(4096, 8, 1.0f);
    for (size_t i = 0; i < v.size(); ++i) {
      rounded[i] = static_cast<float>(v[i] * (1 + 3e-6 * jitter[i]));  // ~25 float32 roundings
      shifted[i] = static_cast<float>(v[i] + 0.01 * scale * (i % 7 == 0));
    }
    const TensorComparison healthy = JudgeY(ref, F32({4096}, rounded), {});
    EXPECT_EQ(healthy.status, Verdict::kPass) << healthy.reason;
    EXPECT_EQ(healthy.tolerance.mode, ToleranceMode::kScaled);
    EXPECT_THAT(healthy.tolerance.Why(), HasSubstr("scaled: atol = 0.0001 x rms(ref)"));
    EXPECT_NEAR(healthy.tolerance.tolerance.atol, 1e-4 * scale, 2e-5 * scale);
    EXPECT_EQ(JudgeY(ref, F32({4096}, shifted), {}).status, Verdict::kFail);
  }
}

// The blind spot of a fixed atol (and of numpy.allclose): outputs of 2e-9
// that double still "pass" atol 1e-4; the scaled default fails them, and an
// explicit atol that wide is kept but warned about.
TEST(ScaledTolerance, SmallOutputsThatDoubleFail) {
  auto v = Noise(1000, 9, 2e-9f);
  std::vector<float> doubled = v;
  for (float& x : doubled) x *= 2;
  const Tensor ref = F32({1, 1000}, v), test = F32({1, 1000}, doubled);
  EXPECT_EQ(JudgeY(ref, test, {.mode = ToleranceMode::kFixed}).status, Verdict::kPass);
  EXPECT_EQ(JudgeY(ref, test, {}).status, Verdict::kFail);
  TolerancePolicy explicit_atol;
  explicit_atol.global.atol = 1e-4;
  const TensorComparison c = JudgeY(ref, test, explicit_atol);
  EXPECT_EQ(c.status, Verdict::kPass);
  EXPECT_EQ(c.tolerance.tolerance.atol, 1e-4);
  ASSERT_EQ(c.tolerance.warnings.size(), 1u);
  EXPECT_THAT(c.tolerance.warnings[0], HasSubstr("at least the reference's largest magnitude"));
  // --rtol alone keeps the scaled atol.
  TolerancePolicy rtol_only;
  rtol_only.global.rtol = 0.5;
  EXPECT_THAT(JudgeY(ref, test, rtol_only).tolerance.Why(), HasSubstr("scaled"));
}

TEST(ScaledTolerance, AFloat64ReferenceJudgesAFloat32RunWithFloat32Bands) {
  std::vector<double> v(100);
  std::vector<float> w(100);
  for (int i = 0; i < 100; ++i) {
    v[i] = std::sin(i * 0.37);
    w[i] = static_cast<float>(v[i]);
  }
  const TensorComparison c =
      JudgeY(Tensor::FromVector(DType::kFloat64, {100}, v), F32({100}, w), {});
  EXPECT_EQ(c.status, Verdict::kPass) << c.reason;  // the dtype change itself is a structural finding
  EXPECT_EQ(c.metrics.mismatches, 0);
  EXPECT_THAT(c.tolerance.rules_fired[0], HasSubstr("the test's looser dtype"));
}

TEST(ToleranceResolution, ExactNameBeatsGlobWhichBeatsGlobalWhichBeatsDtypeDefault) {
  TolerancePolicy p{.mode = ToleranceMode::kFixed};
  p.global.atol = 1e-3;
  p.rules.push_back({.pattern = "layer*", .atol = 1e-2});
  p.rules.push_back({.pattern = "layer.7", .rtol = 0.5});
  const Tensor t = F32({1}, {1});
  EXPECT_EQ(Resolve("out", t, p).tolerance.atol, 1e-3);
  EXPECT_EQ(Resolve("out", t, p).tolerance.rtol, 1e-3);  // float32 default kept
  ResolvedTolerance r = Resolve("layer.7", t, p);
  EXPECT_EQ(r.tolerance.atol, 1e-2);
  EXPECT_EQ(r.tolerance.rtol, 0.5);
  ASSERT_EQ(r.rules_fired.size(), 4u);
  EXPECT_THAT(r.rules_fired[0], HasSubstr("default for float32"));
  EXPECT_THAT(r.rules_fired[2], HasSubstr("name 'layer.7'"));
  EXPECT_THAT(r.rules_fired[3], HasSubstr("glob 'layer*'"));
  const TolerancePolicy fixed{.mode = ToleranceMode::kFixed};
  EXPECT_EQ(Resolve("x", Tensor::FromVector(DType::kInt64, {1}, std::vector<int64_t>{3}), {}).tolerance.atol, 0);
  EXPECT_EQ(Resolve("x", Tensor::FromVector(DType::kFloat16, {1}, std::vector<uint16_t>{0x3c00}), fixed).tolerance.atol,
            1e-2);
  EXPECT_EQ(Resolve("x", t, {.mode = ToleranceMode::kFixed, .quantized = true}).tolerance.atol, 1e-1);
}

TEST(ToleranceJudge, EachStatisticDecidesDifferently) {
  TensorMetrics m;
  m.count = 1000;
  m.mismatches = 1;
  m.max_abs = 2e-4;
  m.mean_abs = 1e-6;
  m.ref_max = 1;
  EXPECT_NE(Judge(m, {.atol = 1e-4, .rtol = 0}), "");
  EXPECT_EQ(Judge(m, {.atol = 1e-4, .rtol = 0, .decide_by = Statistic::kMean}), "");
  EXPECT_NE(Judge(m, {.atol = 1e-4, .rtol = 0, .decide_by = Statistic::kMax}), "");
  EXPECT_EQ(Judge(m, {.atol = 1e-4, .rtol = 0, .decide_by = Statistic::kQuantile, .quantile = 0.999}), "");
  EXPECT_NE(Judge(m, {.atol = 1e-4, .rtol = 0, .decide_by = Statistic::kQuantile, .quantile = 0.9999}), "");
  m.nan_mismatch = 1;
  EXPECT_THAT(Judge(m, {.atol = 1, .rtol = 0, .decide_by = Statistic::kMean}), HasSubstr("NaN"));
}

TEST(TolerancePolicyJson, RoundTripsAndNamesTheBadKey) {
  auto p = TolerancePolicyFromJson(nlohmann::json::parse(
      R"({"atol":1e-3,"mode":"adaptive","outputs":[{"match":"logits*","rtol":0.1,"decide_by":"max"}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->mode, ToleranceMode::kAdaptive);
  ASSERT_EQ(p->rules.size(), 1u);
  EXPECT_EQ(p->rules[0].decide_by, Statistic::kMax);
  auto again = TolerancePolicyFromJson(TolerancePolicyToJson(*p));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(TolerancePolicyToJson(*again), TolerancePolicyToJson(*p));

  auto bad = TolerancePolicyFromJson(nlohmann::json::parse(R"({"outputs":[{"match":"a","rtol":"x"}]})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message(), HasSubstr("outputs[0].rtol"));
  EXPECT_FALSE(TolerancePolicyFromJson(nlohmann::json::parse(R"({"atl":1})")).has_value());
  EXPECT_FALSE(TolerancePolicyFromJson(nlohmann::json::parse(R"({"mode":"fuzzy"})")).has_value());
  EXPECT_FALSE(TolerancePolicyFromJson(nlohmann::json::parse(R"({"outputs":[{"atol":1}]})")).has_value());
}

TEST(ToleranceRuleSpec, ParsesTheCommandLineForm) {
  auto r = ParseToleranceRule("/layer1/*:atol=1e-3,by=quantile,q=0.99");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->pattern, "/layer1/*");
  EXPECT_EQ(r->atol, 1e-3);
  EXPECT_EQ(r->quantile, 0.99);
  EXPECT_FALSE(ParseToleranceRule("noколон").has_value());
  EXPECT_FALSE(ParseToleranceRule("a:atol=-1").has_value());
  EXPECT_FALSE(ParseToleranceRule("a:speed=3").has_value());
}

// Issue 50: on an ill-conditioned sample float32 itself moves the output
// far beyond the scaled band; the conditioning floor lifts the band to a
// multiple of that spread and says so. Where the spread is small it changes
// nothing, so a fault of 0.04% of the output's rms still fails.
TEST(ConditioningFloor, LiftsTheBandOnlyWhereFloat32CannotDecide) {
  auto v = Noise(4096, 7, 1.0f);
  const Tensor ref = F32({4096}, v);
  std::vector<float> moved = v, fault = v, small_spread(4096), large_spread(4096);
  auto jitter = Noise(4096, 9, 1.0f);
  for (size_t i = 0; i < v.size(); ++i) {
    moved[i] = static_cast<float>(v[i] + 2e-3 * jitter[i]);   // 20x the scaled atol: what float32 did here
    fault[i] = static_cast<float>(v[i] + 4e-4 * (i % 3 == 0));  // 0.04% of rms on a third of the elements
    large_spread[i] = static_cast<float>(std::fabs(2e-3 * jitter[i]));
    small_spread[i] = static_cast<float>(std::fabs(1e-7 * jitter[i]));
  }
  TensorSet r, t, f, large, small;
  ASSERT_TRUE(r.Add("y", ref));
  ASSERT_TRUE(t.Add("y", F32({4096}, moved)));
  ASSERT_TRUE(f.Add("y", F32({4096}, fault)));
  ASSERT_TRUE(large.Add("y", F32({4096}, large_spread)));
  ASSERT_TRUE(small.Add("y", F32({4096}, small_spread)));
  // Without the floor, float32's own movement fails the scaled band.
  auto plain = CompareSets(r, t, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->tensors[0].status, Verdict::kFail);
  auto lifted = CompareSets(r, t, {.conditioning = &large});
  ASSERT_TRUE(lifted.has_value());
  EXPECT_EQ(lifted->tensors[0].status, Verdict::kPass) << lifted->tensors[0].reason;
  EXPECT_THAT(lifted->tensors[0].tolerance.Why(), HasSubstr("conditioning"));
  // A well-conditioned sample: the floor stays below the scaled band.
  auto kept = CompareSets(r, f, {.conditioning = &small});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->tensors[0].status, Verdict::kFail);
  EXPECT_THAT(kept->tensors[0].tolerance.Why(), HasSubstr("scaled"));
}

}  // namespace
}  // namespace parity
