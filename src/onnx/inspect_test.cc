#include "onnx/inspect.h"

#include <gtest/gtest.h>

#include "onnx/builtin_models.h"
#include "onnx/model.h"

namespace parity {
namespace {

TEST(Inspect, ConvBnRelu) {
  ModelInfo info = Inspect(ConvBnRelu());
  EXPECT_EQ(info.ir_version, 8);
  EXPECT_EQ(info.default_opset(), 17);
  EXPECT_EQ(info.producer_name, "parity-builder");
  EXPECT_EQ(info.graph_name, "conv_bn_relu");
  ASSERT_EQ(info.inputs.size(), 1u);  // initializers are not inputs
  EXPECT_EQ(info.inputs[0].type.dtype, DType::kFloat32);
  EXPECT_EQ(info.inputs[0].type.StaticShape(), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(info.initializer_count, 6);  // conv weight+bias, 4 BatchNorm tensors
  EXPECT_EQ(info.initializer_bytes, (16 * 3 * 3 * 3 + 16 + 4 * 16) * 4);
  ASSERT_EQ(info.op_counts.size(), 3u);
  EXPECT_EQ(info.op_counts[0].op_type, "BatchNormalization");  // sorted
}

TEST(Inspect, Opset18Model) {
  ModelInfo info = Inspect(OpsetModel(18));
  EXPECT_EQ(info.default_opset(), 18);
  EXPECT_EQ(info.opsets.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "x");
  EXPECT_EQ(info.outputs[0].name, "y");
}

// Found by the model fuzz target: an initializer whose dims multiply past
// int64 (1662461571955968 * 8064 * ...). Its size counts as 0, and the sum
// over initializers saturates, instead of overflowing.
TEST(Inspect, OverflowingInitializerDimsCountNoBytes) {
  auto m = Model::Load(std::string(PARITY_SOURCE_DIR) + "/fuzz/crashes/model_inspect_dims_overflow.onnx");
  ASSERT_TRUE(m) << m.error().message();
  const ModelInfo info = Inspect(*m);
  EXPECT_GE(info.initializer_bytes, 0);
  EXPECT_LT(info.initializer_bytes, 1 << 20);  // the other four are small
}

TEST(Inspect, UnsupportedAndSymbolicTypesAreNamed) {
  TensorType t;
  t.onnx_elem_type = 14;
  t.dtype_name = "unsupported: 14";
  t.has_shape = true;
  t.dims = {Dim::Symbolic("batch"), Dim::Unknown(), Dim::Known(3)};
  EXPECT_EQ(t.ToString(), "unsupported: 14[batch, ?, 3]");
  EXPECT_FALSE(t.StaticShape());
}

}  // namespace
}  // namespace parity
