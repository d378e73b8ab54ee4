#include "onnx/builder.h"

#include <gtest/gtest.h>

#include "onnx/builtin_models.h"
#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {
namespace {

std::string Errors(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings)
    if (f.severity != Severity::kInfo) out += std::string(SeverityName(f.severity)) + ": " + f.message + "\n";
  return out;
}

int64_t CountOp(const ModelInfo& info, const std::string& op) {
  for (const auto& c : info.op_counts)
    if (c.op_type == op && c.domain.empty()) return c.count;
  return 0;
}

TEST(BuiltinModels, ConvBnReluMatchesTheSeed) {
  Model m = ConvBnRelu();
  EXPECT_EQ(Errors(Check(m)), "");
  ModelInfo info = Inspect(m);
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "input");
  EXPECT_EQ(info.inputs[0].type.ToString(), "float32[1, 3, 224, 224]");
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].name, "output");
  EXPECT_EQ(info.outputs[0].type.ToString(), "float32[1, 16, 224, 224]");
  EXPECT_EQ(info.node_count, 3);
  EXPECT_EQ(CountOp(info, "Conv"), 1);
  EXPECT_EQ(CountOp(info, "BatchNormalization"), 1);
  EXPECT_EQ(CountOp(info, "Relu"), 1);
}

TEST(BuiltinModels, ResidualCnnIsValidAndLarge) {
  Model m = ResidualCnn();
  EXPECT_EQ(Errors(Check(m)), "");
  ModelInfo info = Inspect(m);
  EXPECT_GE(info.node_count, 50);  // builtin_models.h: ">= 50 nodes"
  EXPECT_EQ(CountOp(info, "Resize"), 1);
  EXPECT_EQ(CountOp(info, "GlobalAveragePool"), 1);
  EXPECT_EQ(CountOp(info, "Gemm"), 1);
  EXPECT_GE(CountOp(info, "Add"), 5);
  EXPECT_EQ(info.outputs[0].type.ToString(), "float32[1, 10]");
}

TEST(BuiltinModels, TransformerBlockHasTheFusablePatterns) {
  Model m = TransformerBlock();
  EXPECT_EQ(Errors(Check(m)), "");
  ModelInfo info = Inspect(m);
  EXPECT_GE(info.node_count, 50);  // builtin_models.h: ">= 50 nodes"
  EXPECT_EQ(CountOp(info, "Erf"), 2);   // one Gelu per layer
  EXPECT_EQ(CountOp(info, "Sqrt"), 5);  // one per LayerNorm
  EXPECT_EQ(CountOp(info, "Softmax"), 2);
  EXPECT_EQ(CountOp(info, "Sigmoid"), 1);  // the SiLU
  EXPECT_EQ(info.outputs[0].type.ToString(), "float32[1, 16, 64]");
}

TEST(BuiltinModels, AreDeterministic) {
  EXPECT_TRUE(*ResidualCnn().Serialize() == *ResidualCnn().Serialize());
  EXPECT_TRUE(*TransformerBlock().Serialize() == *TransformerBlock().Serialize());
}

TEST(ModelBuilder, NamesNodesLikeTheExporter) {
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, Shape{1, 4});
  std::string y;
  {
    auto s = b.Scope("layer1/act");
    y = b.Relu(b.Relu(x));
  }
  b.Output(y, "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  ModelInfo info = Inspect(*m);
  EXPECT_EQ(info.node_count, 2);
  EXPECT_EQ(info.outputs[0].name, "y");
}

TEST(ModelBuilder, SymbolicInputDims) {
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(4)});
  b.Output(b.Relu(x), "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  ModelInfo info = Inspect(*m);
  EXPECT_EQ(info.inputs[0].type.ToString(), "float32[batch, 4]");
  EXPECT_EQ(info.outputs[0].type.ToString(), "float32[batch, 4]");
}

}  // namespace
}  // namespace parity
