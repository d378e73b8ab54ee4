#include "engine/quant/output_tolerance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx/builder.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

Model Built(ModelBuilder& b) {
  auto m = b.Build();
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message());
  return m ? std::move(*m) : Model{};
}

// x -> MatMul(W) -> Reshape -> y, and Softmax -> p.
Model TolerantFloatNet() {
  ModelBuilder b;
  const std::string x = b.Input("x", DType::kFloat32, {1, 4});
  const std::string w = b.RandomWeight("w", {4, 4}, 0.5f);
  const std::string m = b.MatMul(x, w);
  const std::string r = b.Reshape(m, {1, 4});
  const std::string p = b.Softmax(r);
  b.Output(r, "y");
  b.Output(p, "p");
  return Built(b);
}

// What quantize_static writes: x and the MatMul's output through
// QuantizeLinear/DequantizeLinear (scale 0.05 on the output), then the same
// Reshape (y, on the grid) and Softmax (p, off it).
Model TolerantQdqNet() {
  ModelBuilder b;
  Tensor zp(DType::kUInt8, {});
  const std::string x = b.Input("x", DType::kFloat32, {1, 4});
  const std::string zx = b.Initializer("x_zero_point", zp);
  const std::string sx = b.Scalar("x_scale", 0.02f);
  const std::string xq = b.Op("QuantizeLinear", {x, sx, zx});
  const std::string xdq = b.Op("DequantizeLinear", {xq, sx, zx});
  const std::string w = b.RandomWeight("w", {4, 4}, 0.5f);
  const std::string m = b.MatMul(xdq, w);
  const std::string zy = b.Initializer("m_zero_point", zp);
  const std::string sy = b.Scalar("m_scale", 0.05f);
  const std::string mdq = b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {m, sy, zy}), sy, zy});
  const std::string r = b.Reshape(mdq, {1, 4});
  const std::string p = b.Softmax(r);
  b.Output(r, "y");
  b.Output(p, "p");
  return Built(b);
}

TEST(DeriveOutputRules, AQdqOutputIsJudgedInStepsOfTheLastScaleAndAnOffGridOneFallsBack) {
  const auto rules = DeriveOutputRules(TolerantFloatNet(), TolerantQdqNet(), {});
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].output, "y");
  EXPECT_EQ(rules[0].rule, "qdq_steps");
  EXPECT_NEAR(rules[0].scale, 0.05, 1e-7);
  EXPECT_NEAR(rules[0].atol, kOutputSteps * 0.05, 1e-7);
  EXPECT_EQ(rules[0].rtol, 0);
  EXPECT_EQ(rules[0].decide_by, "quantile");
  EXPECT_THAT(rules[0].why, HasSubstr("the last DequantizeLinear before it"));
  EXPECT_THAT(rules[0].why, HasSubstr("through Reshape"));
  EXPECT_EQ(rules[1].output, "p");
  EXPECT_EQ(rules[1].rule, "quantized_default");
  EXPECT_THAT(rules[1].why, HasSubstr("Softmax"));

  // The bands go into the policy by name; the fallback makes it a quantized target.
  const TolerancePolicy p = WithOutputRules({}, rules);
  ASSERT_EQ(p.rules.size(), 2u);
  EXPECT_EQ(p.rules[0].pattern, "y");
  EXPECT_EQ(p.rules[0].decide_by, Statistic::kQuantile);
  EXPECT_EQ(p.rules[0].quantile, kOutputQuantile);
  EXPECT_EQ(p.rules[0].reference_fraction, kReferenceFraction);
  // The fallback keeps the scaled band (no atol) with the same allowance for isolated outliers.
  EXPECT_EQ(p.rules[1].pattern, "p");
  EXPECT_FALSE(p.rules[1].atol.has_value());
  EXPECT_EQ(p.rules[1].decide_by, Statistic::kQuantile);
  EXPECT_EQ(p.rules[1].quantile, kOutputQuantile);
  EXPECT_TRUE(p.quantized);
}

TEST(DeriveOutputRules, AUsersAtolWinsAndAModelNotDerivedGetsNoRule) {
  TolerancePolicy user;
  user.global.atol = 1e-3;
  const auto rules = DeriveOutputRules(TolerantFloatNet(), TolerantQdqNet(), user);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].rule, "user");
  EXPECT_TRUE(WithOutputRules(user, rules).rules.empty());
  EXPECT_TRUE(DeriveOutputRules(TolerantFloatNet(), TolerantFloatNet(), {}).empty());
}

}  // namespace
}  // namespace parity
