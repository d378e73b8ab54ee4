// The input checks made before any run (input_check.h): one binding rule,
// every mistake named with both sides, a dump checked against the model.
#include "engine/inputs/input_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity {
namespace {

using ::testing::HasSubstr;

ValueInfo Input(std::string name, DType dtype, std::vector<Dim> dims) {
  TensorType t;
  t.dtype = dtype;
  t.dtype_name = std::string(DTypeName(dtype));
  t.has_shape = true;
  t.dims = std::move(dims);
  return {std::move(name), t};
}

Sample One(std::string name, Tensor t) {
  Sample s{"default", {}};
  EXPECT_TRUE(s.tensors.Add(std::move(name), std::move(t)).has_value());
  return s;
}

const std::vector<ValueInfo> kImages = {
    Input("images", DType::kFloat32, {Dim::Symbolic("batch"), Dim::Known(3), Dim::Known(8), Dim::Known(8)})};

TEST(CheckInputs, AcceptsAnyBatchForASymbolicDim) {
  EXPECT_TRUE(CheckInputs({One("images", Tensor(DType::kFloat32, {4, 3, 8, 8}))}, kImages, "in.npz").has_value());
}

TEST(CheckInputs, NamesANearMissWithDidYouMean) {
  auto s = CheckInputs({One("image", Tensor(DType::kFloat32, {1, 3, 8, 8}))}, kImages, "in.npz", "m.onnx");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message(),
            "in.npz for m.onnx: no tensor for model input 'images' (float32 [batch, 3, 8, 8]); the file has 'image' "
            "(did you mean 'images'?)");
}

TEST(CheckInputs, NamesTheDtypeAndTheShape) {
  auto dtype = CheckInputs({One("images", Tensor(DType::kFloat64, {1, 3, 8, 8}))}, kImages, "in.npz");
  ASSERT_FALSE(dtype.has_value());
  EXPECT_THAT(dtype.error().message(), HasSubstr("input 'images' is float64, the model takes float32"));
  auto shape = CheckInputs({One("images", Tensor(DType::kFloat32, {1, 3, 8}))}, kImages, "in.npz");
  ASSERT_FALSE(shape.has_value());
  EXPECT_THAT(shape.error().message(), HasSubstr("has shape [1, 3, 8], the model takes float32 [batch, 3, 8, 8]"));
}

TEST(CheckInputs, TheSameMistakeInEverySampleIsOneProblem) {
  std::vector<Sample> samples;
  for (const char* name : {"typical", "boundary_large"}) {
    Sample s = One("images", Tensor(DType::kFloat64, {1, 3, 8, 8}));
    s.name = name;
    samples.push_back(std::move(s));
  }
  samples.push_back(One("extra", Tensor(DType::kFloat32, {1})));
  samples.back().name = "anomaly";
  ASSERT_TRUE(samples.back().tensors.Add("images", Tensor(DType::kFloat32, {1, 3, 8, 8})).has_value());
  auto s = CheckInputs(samples, kImages, "in.npz");
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("sample 'typical': input 'images' is float64"));
  EXPECT_THAT(s.error().message(), HasSubstr("(and 1 more problem(s))"));  // 'extra', not the repeat
}

TEST(BindInputNames, InputPrefixBindsAndExactNamesWin) {
  TensorSet set;
  ASSERT_TRUE(set.Add("input_images", Tensor(DType::kFloat32, {1})).has_value());
  ASSERT_TRUE(set.Add("input_ids", Tensor(DType::kInt64, {1})).has_value());
  ASSERT_TRUE(set.Add("ids", Tensor(DType::kInt64, {2})).has_value());
  const TensorSet bound = BindInputNames(set, {"images", "ids"});
  EXPECT_TRUE(bound.Contains("images"));
  EXPECT_FALSE(bound.Contains("input_images"));
  EXPECT_TRUE(bound.Contains("input_ids"));  // 'ids' is already given: no rename
  EXPECT_EQ(bound.Find("ids")->shape(), (Shape{2}));
}

TEST(ClosestName, WithinAThirdOfTheLength) {
  EXPECT_EQ(ClosestName("chek", {"check", "locate", "compare"}), "check");
  EXPECT_EQ(ClosestName("--report-dir", {"--report", "--json"}), "--report");
  EXPECT_EQ(ClosestName("frobnicate", {"check", "locate"}), "");
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace parity
