#include "engine/quant/layer_match.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct N {
  std::string name, op;
  std::vector<std::string> in, out;
};

// A graph view made by hand: nodes in topological order, maps derived.
GraphView View(const std::vector<N>& nodes, std::vector<std::string> inputs, std::vector<std::string> inits) {
  GraphView g;
  for (size_t i = 0; i < nodes.size(); ++i) {
    g.nodes.push_back({.name = nodes[i].name, .op_type = nodes[i].op, .inputs = nodes[i].in, .outputs = nodes[i].out});
    g.node_index[nodes[i].name] = i;
    for (const auto& o : nodes[i].out) g.producer[o] = i;
    for (const auto& t : nodes[i].in) g.consumers[t].push_back(i);
  }
  g.inputs = std::move(inputs);
  g.initializers = std::move(inits);
  return g;
}

// x -> Conv(W) -> c -> Relu -> r -> MatMul(M) -> y
GraphView FloatNet() {
  return View({{"/conv1/Conv", "Conv", {"x", "W"}, {"c"}},
               {"/relu/Relu", "Relu", {"c"}, {"r"}},
               {"/fc/MatMul", "MatMul", {"r", "M"}, {"y"}}},
              {"x"}, {"W", "M"});
}

// What quantize_static writes: QDQ pairs around every tensor, the Relu folded
// into the Conv's QuantizeLinear (the Conv writes "r").
GraphView QdqNet() {
  return View({{"x_QuantizeLinear", "QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_q"}},
               {"x_DequantizeLinear", "DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x_dq"}},
               {"W_DequantizeLinear", "DequantizeLinear", {"W_quantized", "W_scale", "W_zp"}, {"W_dq"}},
               {"/conv1/Conv", "Conv", {"x_dq", "W_dq"}, {"r"}},
               {"r_QuantizeLinear", "QuantizeLinear", {"r", "r_scale", "r_zp"}, {"r_q"}},
               {"r_DequantizeLinear", "DequantizeLinear", {"r_q", "r_scale", "r_zp"}, {"r_dq"}},
               {"M_DequantizeLinear", "DequantizeLinear", {"M_quantized", "M_scale", "M_zp"}, {"M_dq"}},
               {"/fc/MatMul", "MatMul", {"r_dq", "M_dq"}, {"y"}}},
              {"x"}, {"x_scale", "x_zp", "W_quantized", "W_scale", "W_zp", "r_scale", "r_zp", "M_quantized", "M_scale", "M_zp"});
}

TEST(MatchLayers, QdqLayersAreComparedOnTheirDequantizedOutputs) {
  const LayerMatch m = MatchLayers(FloatNet(), QdqNet());
  EXPECT_EQ(m.kind, "qdq");
  ASSERT_EQ(m.layers.size(), 2u);
  const LayerPlan& conv = m.layers[0];
  EXPECT_EQ(conv.layer.node, "/conv1/Conv");
  EXPECT_EQ(conv.layer.tensor, "r");  // the Relu folded into the Conv's QuantizeLinear
  EXPECT_EQ(conv.layer.derived_tensor, "r_dq");
  EXPECT_THAT(conv.layer.folded, ElementsAre("/relu/Relu"));
  EXPECT_EQ(conv.scale, "r_scale");
  EXPECT_EQ(conv.zero_point, "r_zp");
  EXPECT_THAT(conv.layer.inputs, ElementsAre("x"));  // fed through its input's QuantizeLinear
  ASSERT_TRUE(conv.weight.has_value());
  EXPECT_EQ(conv.weight->float_tensor, "W");
  EXPECT_EQ(conv.weight->derived_tensor, "W_dq");
  EXPECT_EQ(conv.weight->scale, "W_scale");
  EXPECT_EQ(conv.layer.module, "conv1");
  // The MatMul's output is a graph output nobody quantized: compared as it is.
  EXPECT_EQ(m.layers[1].layer.derived_tensor, "y");
  EXPECT_THAT(m.layers[1].layer.inputs, ElementsAre("r"));
  EXPECT_EQ(m.compute_layers, 2u);
  EXPECT_EQ(m.compute_matched, 2u);
  EXPECT_TRUE(m.unmatched.empty());  // the folded Relu is not "unmatched"
}

TEST(MatchLayers, SaysWhichLayersCouldNotBeMatchedAndWhy) {
  // A QOperator-style model: the Conv became a QLinearConv of another name.
  GraphView d = View({{"x_QuantizeLinear", "QuantizeLinear", {"x", "s", "z"}, {"x_q"}},
                      {"conv_quant", "QLinearConv", {"x_q", "s", "z"}, {"c_q"}},
                      {"c_DequantizeLinear", "DequantizeLinear", {"c_q", "s", "z"}, {"c"}},
                      {"/relu/Relu", "Relu", {"c"}, {"r"}},
                      {"/fc/MatMul", "MatMulInteger", {"r", "M"}, {"y"}}},
                     {"x"}, {"s", "z", "M"});
  const LayerMatch m = MatchLayers(FloatNet(), d);
  ASSERT_EQ(m.unmatched.size(), 2u);
  EXPECT_EQ(m.unmatched[0].node, "/conv1/Conv");
  EXPECT_THAT(m.unmatched[0].reason, HasSubstr("no node of that name"));
  EXPECT_THAT(m.unmatched[1].reason, HasSubstr("is a MatMulInteger"));
  EXPECT_EQ(m.compute_matched, 0u);
  ASSERT_EQ(m.layers.size(), 1u);  // the Relu still matches
  EXPECT_THAT(m.layers[0].layer.inputs, ElementsAre("c"));
}

TEST(MatchLayers, Float16KeepIoTypesFollowsTheOutputCast) {
  // convert_float_to_float16(keep_io_types=True): Casts at the edges.
  GraphView d = View({{"graph_input_cast0", "Cast", {"x"}, {"graph_input_cast_0"}},
                      {"/conv1/Conv", "Conv", {"graph_input_cast_0", "W"}, {"c"}},
                      {"/relu/Relu", "Relu", {"c"}, {"r"}},
                      {"/fc/MatMul", "MatMul", {"r", "M"}, {"graph_output_cast_0"}},
                      {"graph_output_cast0", "Cast", {"graph_output_cast_0"}, {"y"}}},
                     {"x"}, {"W", "M"});
  // What makes it a float16 model: the types that carry its values.
  for (const char* w : {"W", "M", "graph_input_cast_0", "c", "r", "graph_output_cast_0"})
    d.types[w] = TensorType{.onnx_elem_type = 10, .dtype = DType::kFloat16, .dtype_name = "float16"};
  const LayerMatch m = MatchLayers(FloatNet(), d);
  EXPECT_EQ(m.kind, "float16");
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_THAT(m.layers[0].layer.inputs, ElementsAre("x"));  // back through the input Cast
  ASSERT_TRUE(m.layers[0].weight.has_value());
  EXPECT_TRUE(m.layers[0].weight->derived_is_initializer);
  EXPECT_EQ(m.layers[2].layer.tensor, "y");
  EXPECT_EQ(m.layers[2].layer.derived_tensor, "y");
}

TEST(ModuleFromNodeName, ReadsTheTorchScriptScope) {
  EXPECT_EQ(ModuleFromNodeName("/layer1/layer1.0/conv1/Conv"), "layer1.0.conv1");
  EXPECT_EQ(ModuleFromNodeName("/features/features.5/block/block.2/Relu"), "features.5.block.2");
  EXPECT_EQ(ModuleFromNodeName("/Flatten"), "");
  EXPECT_EQ(ModuleFromNodeName("Conv_3"), "");
}

// A dtype-preserving Cast (int64 -> int64) in a float32 copy made it
// "float16" and judged it with the fp16 band: a x1.005 weight fault passed
// (issue 50). The kind comes from the types that carry the values.
TEST(MatchLayers, ACastAloneMakesNoFloat16Model) {
  GraphView d = View({{"/conv1/Conv", "Conv", {"x", "W"}, {"c"}},
                      {"/relu/Relu", "Relu", {"c"}, {"r"}},
                      {"shape_cast", "Cast", {"n"}, {"n64"}},
                      {"/fc/MatMul", "MatMul", {"r", "M"}, {"y"}}},
                     {"x", "n"}, {"W", "M"});
  for (const char* t : {"W", "M", "c", "r", "y"})
    d.types[t] = TensorType{.onnx_elem_type = 1, .dtype = DType::kFloat32, .dtype_name = "float32"};
  for (const char* t : {"n", "n64"})
    d.types[t] = TensorType{.onnx_elem_type = 7, .dtype = DType::kInt64, .dtype_name = "int64"};
  EXPECT_EQ(MatchLayers(FloatNet(), d).kind, "float");
}

}  // namespace
}  // namespace parity
