#include "onnx/edit.h"

#include <gtest/gtest.h>

#include "onnx/builtin_models.h"
#include "onnx/graph.h"
#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {
namespace {

bool NoErrors(const Model& m) {
  for (const auto& f : Check(m))
    if (f.severity == Severity::kError) {
      ADD_FAILURE() << f.stage << ": " << f.message;
      return false;
    }
  return true;
}

TEST(WithExtraOutputs, ExposesIntermediatesWithTypes) {
  Model m = ConvBnRelu();
  auto view = BuildGraphView(m);
  ASSERT_TRUE(view);
  std::vector<std::string> names;
  for (const auto& t : IntermediateTensors(*view)) names.push_back(t.name);
  auto out = WithExtraOutputs(m, names);
  ASSERT_TRUE(out) << out.error().message();
  ModelInfo info = Inspect(*out);
  ASSERT_EQ(info.outputs.size(), 3u);  // "output" was already one
  EXPECT_EQ(info.outputs[0].name, "output");
  EXPECT_EQ(info.outputs[1].name, "/conv/Conv_output_0");
  EXPECT_EQ(info.outputs[1].type.dtype, DType::kFloat32);
  EXPECT_TRUE(NoErrors(*out));
  EXPECT_EQ(Inspect(m).outputs.size(), 1u);  // the original is untouched
}

TEST(SerializeWithExtraOutputs, ParsesAsTheModelWithTheOutputsAdded) {
  Model m = ConvBnRelu();
  auto view = BuildGraphView(m);
  ASSERT_TRUE(view);
  std::vector<std::string> names;
  for (const auto& t : IntermediateTensors(*view)) names.push_back(t.name);
  auto bytes = m.Serialize();
  ASSERT_TRUE(bytes);
  auto appended = SerializeWithExtraOutputs(m, *bytes, names);
  ASSERT_TRUE(appended) << appended.error().message();
  auto parsed = Model::FromBytes(*appended);
  ASSERT_TRUE(parsed) << parsed.error().message();
  auto expected = WithExtraOutputs(m, names);
  ASSERT_TRUE(expected);
  // Same message: protobuf merged the appended outputs into the graph.
  EXPECT_EQ(*parsed->Serialize(), *expected->Serialize());
  EXPECT_FALSE(SerializeWithExtraOutputs(m, *bytes, {"no_such_tensor"}));
}

TEST(HasNodeNames, TrueOnlyWhenWithNodeNamesChangesNothing) {
  Model m = ConvBnRelu();
  const Model named = WithNodeNames(m);
  EXPECT_TRUE(HasNodeNames(named));
  EXPECT_EQ(HasNodeNames(m), *m.Serialize() == *named.Serialize());
}

TEST(WithExtraOutputs, RejectsUnknownTensors) {
  auto out = WithExtraOutputs(ConvBnRelu(), {"no_such_tensor"});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(out.error().message().find("no_such_tensor"), std::string::npos);
}

TEST(ExtractRegion, CutsAValidStandaloneModel) {
  Model m = TransformerBlock();
  auto view = BuildGraphView(m);
  ASSERT_TRUE(view);
  // The first LayerNorm: from the model input to the output of its final Add.
  const auto ln_end = view->FindNode("/encoder/layer0/ln1/Add_1");
  ASSERT_TRUE(ln_end);
  const std::string ln_out = view->nodes[*ln_end].outputs[0];
  auto region = ExtractRegion(m, {"input"}, {ln_out});
  ASSERT_TRUE(region) << region.error().message();
  EXPECT_TRUE(NoErrors(*region));
  ModelInfo info = Inspect(*region);
  EXPECT_EQ(info.node_count, 9);  // ModelBuilder::LayerNorm's nine nodes, ReduceMean to Add_1
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "input");
  EXPECT_EQ(info.inputs[0].type.ToString(), "float32[1, 16, 64]");
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].name, ln_out);
  EXPECT_EQ(info.outputs[0].type.ToString(), "float32[1, 16, 64]");
  EXPECT_EQ(info.initializer_count, 4);  // pow exponent, eps, gamma, beta

  // A region in the middle: its input gets the inferred type.
  const auto gelu_in = view->FindNode("/encoder/layer0/mlp/Div");
  ASSERT_TRUE(gelu_in);
  const auto gelu_out = view->FindNode("/encoder/layer0/mlp/Mul_1");
  ASSERT_TRUE(gelu_out);
  auto gelu = ExtractRegion(m, {view->nodes[*gelu_in].inputs[0]}, {view->nodes[*gelu_out].outputs[0]});
  ASSERT_TRUE(gelu) << gelu.error().message();
  EXPECT_TRUE(NoErrors(*gelu));
  EXPECT_EQ(Inspect(*gelu).node_count, 5);  // the erf Gelu: Div, Erf, Add, Mul, Mul_1
  EXPECT_EQ(Inspect(*gelu).inputs[0].type.ToString(), "float32[1, 16, 256]");
}

// A region cut out of a region (locate's drill-down): the first cut declares
// the types of the intermediates it keeps, so the second finds its input's.
TEST(ExtractRegion, ARegionOfARegionKeepsTheIntermediateTypes) {
  Model m = TransformerBlock();
  auto view = BuildGraphView(m);
  ASSERT_TRUE(view);
  const auto ln_end = view->FindNode("/encoder/layer0/ln1/Add_1");
  const auto sub = view->FindNode("/encoder/layer0/ln1/Sub");
  ASSERT_TRUE(ln_end && sub);
  auto ln = ExtractRegion(m, {"input"}, {view->nodes[*ln_end].outputs[0]});
  ASSERT_TRUE(ln) << ln.error().message();
  auto ln_view = BuildGraphView(*ln, {.infer_shapes = false});  // declared types only
  ASSERT_TRUE(ln_view);
  const std::string centered = view->nodes[*sub].outputs[0];
  ASSERT_NE(ln_view->Type(centered), nullptr) << "the intermediate's type is declared";
  auto tail = ExtractRegion(*ln, {centered}, {view->nodes[*ln_end].outputs[0]});
  ASSERT_TRUE(tail) << tail.error().message();
  EXPECT_TRUE(NoErrors(*tail));
  EXPECT_EQ(Inspect(*tail).inputs[0].type.ToString(), "float32[1, 16, 64]");
}

TEST(ExtractRegion, RefusesOpenRegions) {
  Model m = ConvBnRelu();
  auto r = ExtractRegion(m, {"/conv/Conv_output_0"}, {"output"});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(Inspect(*r).node_count, 2);
  auto open = ExtractRegion(m, {"/bn/BatchNormalization_output_0"}, {"output", "/conv/Conv_output_0"});
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message().find("needs graph input 'input'"), std::string::npos)
      << open.error().message();
  EXPECT_EQ(ExtractRegion(m, {"input"}, {"nope"}).error().code(), ErrorCode::kNotFound);
}

TEST(PlantFaults, ScaleInitializerAndReplaceNodeOp) {
  Model m = ConvBnRelu();
  auto before = ReadInitializer(m, "conv.weight");
  ASSERT_TRUE(before);
  auto scaled = ScaleInitializer(m, "conv.weight", 2.0);
  ASSERT_TRUE(scaled) << scaled.error().message();
  auto after = ReadInitializer(*scaled, "conv.weight");
  ASSERT_TRUE(after);
  EXPECT_FLOAT_EQ(after->view<float>()[5], 2.0f * before->view<float>()[5]);
  EXPECT_TRUE(NoErrors(*scaled));
  EXPECT_EQ(ScaleInitializer(m, "missing", 2.0).error().code(), ErrorCode::kNotFound);

  auto swapped = ReplaceNodeOp(m, "/relu/Relu", "Sigmoid");
  ASSERT_TRUE(swapped);
  auto view = BuildGraphView(*swapped);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->nodes[2].op_type, "Sigmoid");
  EXPECT_TRUE(NoErrors(*swapped));
  EXPECT_EQ(ReplaceNodeOp(m, "/nope", "Relu").error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace parity
