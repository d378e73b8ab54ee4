#include "onnx/graph.h"

#include <gtest/gtest.h>

#include <map>

#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/model_internal.h"

namespace parity {
namespace {

TEST(GraphView, ConvBnReluInOrderWithTypes) {
  auto g = BuildGraphView(ConvBnRelu());
  ASSERT_TRUE(g) << g.error().message();
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].name, "/conv/Conv");
  EXPECT_EQ(g->nodes[1].name, "/bn/BatchNormalization");
  EXPECT_EQ(g->nodes[2].name, "/relu/Relu");
  EXPECT_EQ(g->inputs, std::vector<std::string>{"input"});
  EXPECT_EQ(g->outputs, std::vector<std::string>{"output"});
  EXPECT_EQ(g->initializers.size(), 6u);  // the Conv's weight and bias; BatchNorm's scale, bias, mean, var
  const std::string conv_out = g->nodes[0].outputs[0];
  ASSERT_NE(g->Type(conv_out), nullptr);
  EXPECT_EQ(g->Type(conv_out)->ToString(), "float32[1, 16, 224, 224]");  // from shape inference
  EXPECT_EQ(g->Producer("output")->op_type, "Relu");
  EXPECT_EQ(g->consumers.at("input"), std::vector<size_t>{0});

  auto tensors = IntermediateTensors(*g);
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_FALSE(tensors[0].is_graph_output);
  EXPECT_TRUE(tensors[2].is_graph_output);
  EXPECT_EQ(tensors[2].name, "output");
}

// Nodes stored out of order come back topologically sorted; unnamed nodes get names.
TEST(GraphView, SortsAndNamesNodes) {
  Model m = OpsetModel(17);
  auto& g = *onnx_adapter::MutableProto(m).mutable_graph();
  std::reverse(g.mutable_node()->begin(), g.mutable_node()->end());
  g.mutable_node(0)->clear_name();  // the Relu
  auto view = BuildGraphView(m);
  ASSERT_TRUE(view) << view.error().message();
  std::vector<std::string> order;
  for (const auto& n : view->nodes) order.push_back(n.op_type);
  EXPECT_EQ(order, (std::vector<std::string>{"ReduceMean", "Sub", "Relu"}));
  EXPECT_EQ(view->nodes[2].name, "Relu_0");
  EXPECT_TRUE(view->nodes[2].name_synthesized);
  for (size_t i = 0; i < view->nodes.size(); ++i)
    for (const auto& in : view->nodes[i].inputs)
      if (auto it = view->producer.find(in); it != view->producer.end()) {
        EXPECT_LT(it->second, i);
      }
}

TEST(GraphView, DetectsCycles) {
  Model m = OpsetModel(17);
  auto& g = *onnx_adapter::MutableProto(m).mutable_graph();
  // ReduceMean reads the Relu's output: ReduceMean -> Sub -> Relu -> ReduceMean.
  g.mutable_node(0)->set_input(0, g.node(2).output(0));
  auto view = BuildGraphView(m);
  ASSERT_FALSE(view);
  EXPECT_NE(view.error().message().find("cycle"), std::string::npos) << view.error().message();
}

TEST(GraphView, DetectsUndefinedInputs) {
  Model m = OpsetModel(17);
  auto& g = *onnx_adapter::MutableProto(m).mutable_graph();
  g.mutable_node(2)->set_input(0, "nowhere");
  auto view = BuildGraphView(m);
  ASSERT_FALSE(view);
  EXPECT_NE(view.error().message().find("node '/Relu' (Relu) reads tensor 'nowhere'"), std::string::npos)
      << view.error().message();
}

TEST(GraphView, LargeModelsSortCleanly) {
  for (const Model& m : {ResidualCnn(), TransformerBlock()}) {
    auto view = BuildGraphView(m);
    ASSERT_TRUE(view) << view.error().message();
    EXPECT_GE(view->nodes.size(), 50u);  // builtin_models.h: both ">= 50 nodes"
    size_t typed = 0;
    for (const auto& t : IntermediateTensors(*view))
      if (const auto* type = view->Type(t.name); type && type->dtype) ++typed;
    EXPECT_EQ(typed, IntermediateTensors(*view).size());
  }
}


// A weight's Transpose, and what is computed from it alone, is constant; the
// MatMul that reads the input is not, nor what follows it.
TEST(IntermediateTensors, FlagsTensorsNoGraphInputReaches) {
  ModelBuilder b;
  const std::string x = b.Input("x", DType::kFloat32, {1, 4});
  const std::string wt = b.Transpose(b.RandomWeight("w", {4, 4}, 0.1f), {1, 0});
  const std::string scaled = b.Mul(wt, b.Scalar("s", 2.0f));
  b.Output(b.Relu(b.MatMul(x, scaled)), "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  auto g = BuildGraphView(*m, {.infer_shapes = false});
  ASSERT_TRUE(g) << g.error().message();
  std::map<std::string, bool> constant;
  for (const auto& t : IntermediateTensors(*g)) constant[t.name] = t.constant;
  ASSERT_EQ(constant.size(), 4u);
  EXPECT_TRUE(constant.at(wt));
  EXPECT_TRUE(constant.at(scaled));
  EXPECT_FALSE(constant.at("y"));
  size_t input_dependent = 0;
  for (const auto& [name, c] : constant) input_dependent += !c;
  EXPECT_EQ(input_dependent, 2u);  // the MatMul's output and y
}

}  // namespace
}  // namespace parity
