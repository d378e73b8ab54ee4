#include "engine/torch/layer_evidence.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compare/judge.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

Tensor F32(const std::vector<float>& v) {
  return Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
}

// A layer judged as JudgeAlignment judges it: the scaled default band.
LayerVerdict Judged(const Tensor& ref, const Tensor& test) {
  LayerVerdict v;
  auto j = JudgeTensor("layer", ref, test, TolerancePolicy{});
  EXPECT_TRUE(j.has_value());
  v.metrics = j->metrics;
  v.tolerance = j->tolerance;
  v.reason = j->reason;
  v.status = v.reason.empty() ? Verdict::kPass : Verdict::kFail;
  return v;
}

std::vector<float> Ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i % 97) - 48) / 10.0f;
  return v;
}

// Issue 50: one element of 8,000 at 2.7x its band failed healthy exports.
TEST(LayerEvidence, OneElementAtAFewBandsIsANoteNotEvidence) {
  std::vector<float> r = Ramp(8000), t = r;
  const Tensor ref = F32(r);
  const double band = Band(Judged(ref, ref).tolerance.tolerance, std::fabs(r[100]));
  t[100] += static_cast<float>(2.7 * band);
  const Tensor test = F32(t);
  LayerVerdict v = Judged(ref, test);
  ASSERT_EQ(v.status, Verdict::kFail);
  ASSERT_EQ(v.metrics.mismatches, 1);
  std::string note;
  EXPECT_TRUE(IsIsolatedExcursion(ref, test, v, note));
  EXPECT_THAT(note, HasSubstr("1 of 8000 elements"));
  EXPECT_NEAR(WorstBandRatio(ref, test, v.tolerance.tolerance), 2.7, 0.05);
}

TEST(LayerEvidence, ManyElementsOrOneFarOutIsEvidence) {
  std::vector<float> r = Ramp(8000);
  const Tensor ref = F32(r);
  const Tolerance tol = Judged(ref, ref).tolerance.tolerance;
  std::string note;
  // Systematic: a whole channel of 100 elements just outside the band.
  std::vector<float> t = r;
  for (size_t i = 0; i < 100; ++i) t[i] += static_cast<float>(1.5 * Band(tol, std::fabs(r[i])));
  const Tensor many = F32(t);
  EXPECT_FALSE(IsIsolatedExcursion(ref, many, Judged(ref, many), note));
  // One element far beyond its band.
  t = r;
  t[7] += static_cast<float>(50 * Band(tol, std::fabs(r[7])));
  const Tensor far = F32(t);
  EXPECT_FALSE(IsIsolatedExcursion(ref, far, Judged(ref, far), note));
  // A NaN where PyTorch has a number.
  t = r;
  t[3] = std::numeric_limits<float>::quiet_NaN();
  const Tensor nan = F32(t);
  EXPECT_FALSE(IsIsolatedExcursion(ref, nan, Judged(ref, nan), note));
}

// A small tensor: 1 of 128 (the ssdlite Conv that failed on an Intel Xeon).
TEST(LayerEvidence, TheHandfulIsAtLeastFourElements) {
  std::vector<float> r = Ramp(128), t = r;
  const Tensor ref = F32(r);
  const Tolerance tol = Judged(ref, ref).tolerance.tolerance;
  t[5] += static_cast<float>(2 * Band(tol, std::fabs(r[5])));
  const Tensor test = F32(t);
  std::string note;
  EXPECT_TRUE(IsIsolatedExcursion(ref, test, Judged(ref, test), note));
  for (size_t i = 10; i < 20; ++i) t[i] += static_cast<float>(2 * Band(tol, std::fabs(r[i])));
  const Tensor eleven = F32(t);
  EXPECT_FALSE(IsIsolatedExcursion(ref, eleven, Judged(ref, eleven), note));
}

// When the outputs fail and no layer is systematic, the excursion feeding
// them is the divergence after all.
TEST(LayerEvidence, AnExcursionFeedingAFailingOutputIsReinstated) {
  TorchComparison c;
  c.layers.resize(3);
  for (size_t k = 0; k < 3; ++k) {
    c.layers[k].status = Verdict::kPass;
    c.layers[k].alignment.tensor = "t" + std::to_string(k);
  }
  c.layers[1].note = "an isolated excursion";
  c.outputs.tensors.push_back({.name = "y", .status = Verdict::kPass});
  ReinstatePropagatingExcursion(c, {});
  EXPECT_FALSE(c.first_divergence.has_value());  // the outputs pass: a note only
  c.outputs.tensors[0].status = Verdict::kFail;
  ReinstatePropagatingExcursion(c, {"t0", "t2", "y"});  // t1 does not feed y
  EXPECT_FALSE(c.first_divergence.has_value());
  ReinstatePropagatingExcursion(c, {"t1", "y"});
  ASSERT_TRUE(c.first_divergence.has_value());
  EXPECT_EQ(*c.first_divergence, 1u);
  EXPECT_EQ(c.layers[1].status, Verdict::kFail);
  EXPECT_THAT(c.layers[1].note, HasSubstr("evidence"));
}

// Issue 51 item 4: T5's position bias leaves block 0 with the causal mask
// folded in by torchscript (float32's lowest where PyTorch has the bias).
std::vector<float> Bias(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 20.0f;
  return v;
}

TEST(LayerEvidence, AMaskFoldedInIsANoteNotEvidence) {
  std::vector<float> r = Bias(36), t = r;
  for (size_t i : {1u, 2u, 5u}) t[i] = std::numeric_limits<float>::lowest();
  const Tensor ref = F32(r), test = F32(t);
  LayerVerdict v = Judged(ref, test);
  ASSERT_EQ(v.status, Verdict::kFail);
  std::string note;
  EXPECT_TRUE(IsFoldedMask(ref, test, v, note));
  EXPECT_THAT(note, HasSubstr("the 3 of 36 elements outside the band hold an attention mask's fill"));
  EXPECT_TRUE(IsIsolatedExcursion(ref, test, v, note));
}

// Its twin: a mask folded in and one more element off is evidence.
TEST(LayerEvidence, AMaskFoldedInBesideAnotherDifferenceIsEvidence) {
  for (const float fill : {std::numeric_limits<float>::lowest(), -std::numeric_limits<float>::infinity()}) {
    std::vector<float> r = Bias(36), t = r;
    t[1] = fill;
    t[7] += 0.05f;
    const Tensor ref = F32(r), test = F32(t);
    LayerVerdict v = Judged(ref, test);
    std::string note;
    EXPECT_FALSE(IsFoldedMask(ref, test, v, note)) << fill;
    EXPECT_FALSE(IsIsolatedExcursion(ref, test, v, note)) << fill;
  }
}

}  // namespace
}  // namespace parity
