#include "ort/tensor_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity::ort {
namespace {

using ::testing::HasSubstr;

std::vector<TensorInfo> ImageInput() {
  TensorInfo info;
  info.name = "images";
  info.onnx_type = 1;
  info.dtype = DType::kFloat32;
  info.shape = {-1, 3, 4, 4};
  info.dim_names = {"batch", "", "", ""};
  return {info};
}

TensorSet One(const std::string& name, Tensor t) {
  TensorSet set;
  set.Set(name, std::move(t));
  return set;
}

TEST(TensorInfo, PrintsSymbolicAndFixedDims) {
  EXPECT_EQ(ImageInput()[0].ToString(), "float32 [batch, 3, 4, 4]");
  TensorInfo unnamed = ImageInput()[0];
  unnamed.dim_names.clear();
  EXPECT_EQ(unnamed.ShapeString(), "[?, 3, 4, 4]");
}

TEST(CheckInputs, AcceptsAnyValueForDynamicDim) {
  EXPECT_TRUE(CheckInputs(ImageInput(), One("images", Tensor(DType::kFloat32, {7, 3, 4, 4}))).has_value());
}

TEST(CheckInputs, RejectsMissingInputNamingIt) {
  auto s = CheckInputs(ImageInput(), TensorSet());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("missing input 'images' (float32 [batch, 3, 4, 4])"));
}

TEST(CheckInputs, RejectsUnknownNameListingModelInputs) {
  TensorSet given = One("images", Tensor(DType::kFloat32, {1, 3, 4, 4}));
  given.Set("labels", Tensor(DType::kInt64, {1}));
  auto s = CheckInputs(ImageInput(), given);
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("unknown input 'labels' (model inputs: images)"));
}

TEST(CheckInputs, RejectsWrongDtype) {
  auto s = CheckInputs(ImageInput(), One("images", Tensor(DType::kFloat64, {1, 3, 4, 4})));
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("input 'images': expected float32, given float64"));
}

TEST(CheckInputs, RejectsWrongRank) {
  auto s = CheckInputs(ImageInput(), One("images", Tensor(DType::kFloat32, {3, 4, 4})));
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(),
              HasSubstr("input 'images': expected rank 4 [batch, 3, 4, 4], given rank 3 [3, 4, 4]"));
}

TEST(CheckInputs, RejectsWrongFixedDim) {
  auto s = CheckInputs(ImageInput(), One("images", Tensor(DType::kFloat32, {1, 1, 4, 4})));
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("input 'images': dimension 1 expected 3, given 1"));
}

TEST(CheckInputs, SkipsRankCheckWhenModelStatesNoShape) {
  std::vector<TensorInfo> inputs = ImageInput();
  inputs[0].rank_known = false;
  inputs[0].shape.clear();
  inputs[0].dim_names.clear();
  EXPECT_TRUE(CheckInputs(inputs, One("images", Tensor(DType::kFloat32, {2}))).has_value());
  EXPECT_FALSE(CheckInputs(inputs, One("images", Tensor(DType::kInt8, {2}))).has_value());
}

TEST(CheckInputs, ReportsEveryProblemOnOneLine) {
  TensorSet given = One("images", Tensor(DType::kInt32, {1, 1, 4, 4}));
  given.Set("extra", Tensor(DType::kInt32, {1}));
  auto s = CheckInputs(ImageInput(), given);
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("expected float32, given int32"));
  EXPECT_THAT(s.error().message(), HasSubstr("dimension 1 expected 3"));
  EXPECT_THAT(s.error().message(), HasSubstr("unknown input 'extra'"));
  EXPECT_EQ(s.error().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace parity::ort
