// Every parity DType goes into ORT and comes back bit for bit (Identity), and
// Cast produces each output type.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "ort/session.h"
#include "ort/test_models.h"

namespace parity::ort {
namespace {

using testing::IdentityModel;
using testing::ModelBuilder;

constexpr DType kNumericTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                   DType::kInt8,    DType::kUInt8,   DType::kInt16,   DType::kUInt16,
                                   DType::kInt32,   DType::kUInt32,  DType::kInt64,   DType::kUInt64,
                                   DType::kBool};

Tensor Pattern(DType dtype, int64_t n) {
  Tensor t(dtype, {n});
  auto bytes = reinterpret_cast<unsigned char*>(t.mutable_data());
  for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = i % 3 == 0;
  }
  return t;
}

class IdentityRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(IdentityRoundTrip, ReturnsTheSameBits) {
  const DType dtype = GetParam();
  auto s = Session::Create(ModelSource::FromBytes(IdentityModel(DTypeToOnnx(dtype))), {});
  ASSERT_TRUE(s.has_value()) << DTypeName(dtype) << ": " << s.error().message();
  EXPECT_EQ(s->inputs()[0].dtype, dtype);
  TensorSet in;
  in.Set("x", Pattern(dtype, 5));
  auto out = s->Run(in);
  ASSERT_TRUE(out.has_value()) << DTypeName(dtype) << ": " << out.error().message();
  EXPECT_TRUE(out->Find("y")->BitwiseEquals(*in.Find("x"))) << DTypeName(dtype);
}

TEST_P(IdentityRoundTrip, HandlesEmptyTensors) {
  const DType dtype = GetParam();
  auto s = Session::Create(ModelSource::FromBytes(IdentityModel(DTypeToOnnx(dtype))), {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  TensorSet in;
  in.Set("x", Tensor(dtype, {0}));
  auto out = s->Run(in);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_EQ(out->Find("y")->shape(), (Shape{0}));
  EXPECT_EQ(out->Find("y")->dtype(), dtype);
}

INSTANTIATE_TEST_SUITE_P(AllNumeric, IdentityRoundTrip, ::testing::ValuesIn(kNumericTypes),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

TEST(StringTensors, RoundTripThroughIdentity) {
  auto s = Session::Create(ModelSource::FromBytes(IdentityModel(DTypeToOnnx(DType::kString))), {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  TensorSet in;
  in.Set("x", Tensor::FromStrings({3}, {"alpha", "", "gamma with spaces"}));
  auto out = s->Run(in);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_EQ(out->Find("y")->dtype(), DType::kString);
  EXPECT_THAT(out->Find("y")->strings(), ::testing::ElementsAre("alpha", "", "gamma with spaces"));
}

class CastOutput : public ::testing::TestWithParam<DType> {};

TEST_P(CastOutput, ProducesTheRequestedDtype) {
  const DType to = GetParam();
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {4}).Output("y", DTypeToOnnx(to));
  testing::SetIntAttr(m.Node("Cast", "cast", {"x"}, {"y"}), "to", DTypeToOnnx(to));
  auto s = Session::Create(ModelSource::FromBytes(m.Bytes()), {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  TensorSet in;
  in.Set("x", Tensor::FromVector<float>(DType::kFloat32, {4}, {0.0f, 1.0f, 2.0f, 3.0f}));
  auto out = s->Run(in);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  const Tensor& y = *out->Find("y");
  ASSERT_EQ(y.dtype(), to);
  ASSERT_EQ(y.shape(), (Shape{4}));
  if (to == DType::kString) {
    EXPECT_THAT(y.strings(), ::testing::ElementsAre("0", "1", "2", "3"));
  } else {
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(y.GetAsDouble(i), i == 0 ? 0.0 : (to == DType::kBool ? 1.0 : i));
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CastOutput,
                         ::testing::Values(DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                           DType::kBFloat16, DType::kInt8, DType::kUInt8, DType::kInt16,
                                           DType::kUInt16, DType::kInt32, DType::kUInt32, DType::kInt64,
                                           DType::kUInt64, DType::kBool, DType::kString),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace parity::ort
