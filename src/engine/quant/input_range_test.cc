#include "engine/quant/input_range.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "onnx/builder.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

Sample Images(const std::string& name, float scale) {
  std::vector<float> v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i) / 15.0f;
  Sample s{name, {}};
  s.tensors.Set("x", Tensor::FromVector(DType::kFloat32, {1, 16}, v));
  return s;
}

// x -> QuantizeLinear(scale 1/255, zero point 0, uint8) -> DequantizeLinear -> y
Model QdqCopy(float scale) {
  ModelBuilder b(17);
  const std::string x = b.Input("x", DType::kFloat32, Shape{1, 16});
  const std::string s = b.Scalar("x_scale", scale);
  const std::string z = b.Initializer("x_zero_point", Tensor::FromVector(DType::kUInt8, {}, std::vector<uint8_t>{0}));
  const std::string q = b.Op("QuantizeLinear", {x, s, z});
  b.Output(b.Op("DequantizeLinear", {q, s, z}), "y");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value());
  return std::move(*m);
}

// A healthy int8 copy failed only on boundary_large (inputs x100: its input
// quantizer saturates by design); issue 50 judges such samples for
// robustness. The typical samples and the quantizer set the range.
TEST(InputRange, BoundaryLargeLiesBeyondTheTypicalAndCalibratedRange) {
  const std::vector<Sample> samples = {Images("typical", 1.0f), Images("boundary_large", 100.0f),
                                       Images("boundary_small", 1e-3f)};
  const auto ranges = DerivedInputRanges(QdqCopy(1.0f / 255), samples);
  ASSERT_TRUE(ranges.contains("x"));
  EXPECT_NEAR(ranges.at("x").bound, 1.0, 1e-6);
  EXPECT_EQ(OutOfRange(samples[0], ranges), "");
  EXPECT_EQ(OutOfRange(samples[2], ranges), "");
  EXPECT_THAT(OutOfRange(samples[1], ranges), HasSubstr("'x' reaches max|x| 100"));
}

TEST(InputRange, AQuantizerWiderThanTheTypicalSamplesWidensTheRange) {
  const std::vector<Sample> samples = {Images("typical", 1.0f), Images("boundary_large", 100.0f)};
  const auto ranges = DerivedInputRanges(QdqCopy(1.0f), samples);  // represents 0..255
  EXPECT_NEAR(ranges.at("x").bound, 255.0, 1e-6);
  EXPECT_THAT(ranges.at("x").source, HasSubstr("QuantizeLinear"));
  EXPECT_EQ(OutOfRange(samples[1], ranges), "");
}

}  // namespace
}  // namespace parity
