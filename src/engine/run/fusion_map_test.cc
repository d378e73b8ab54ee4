// The fusion map on the fusions ORT 1.29 makes on CPU: each test builds the
// unfused pattern with the model builder, lets ORT optimize it, and checks
// which original nodes the fused node covers.
#include "engine/run/fusion_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/run/optimized_plan.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"

namespace parity {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

struct Mapped {
  GraphView original;
  FusionMap map;
};

Mapped MapAt(const Model& built, OptLevel level) {
  Model model = WithNodeNames(built);
  auto original = BuildGraphView(model, {.infer_shapes = false});
  EXPECT_TRUE(original.has_value()) << original.error().message();
  auto dir = ScratchDir::Create("fusion_map_test");
  EXPECT_TRUE(dir.has_value());
  RunConfig config;
  config.opt_level = level;
  auto map = PlanOf(model, *original, config, "test model", *dir / "opt.onnx");
  EXPECT_TRUE(map.has_value()) << map.error().message();
  return {std::move(*original), std::move(*map)};
}

std::string Describe(const FusionMap& m) {
  std::string s;
  for (const auto& r : m.regions) {
    s += (r.unchanged ? "  = " : "  * ") + r.OpSummary() + " covers [";
    for (const auto& c : r.covers) s += c + " ";
    s += "] -> [";
    for (const auto& o : r.outputs) s += o + " ";
    s += "] boundary [";
    for (const auto& b : r.boundary) s += b + " ";
    s += "]\n";
  }
  return s;
}

// The fused region containing op `op` (domain `domain` when given).
const FusedRegion& Fused(const Mapped& m, const std::string& op, const std::string& domain = "*") {
  for (const auto* r : m.map.Fused())
    for (size_t i = 0; i < r->op_types.size(); ++i)
      if (r->op_types[i] == op && (domain == "*" || r->domains[i] == domain)) return *r;
  ADD_FAILURE() << "no fused region with " << op << "\n" << Describe(m.map);
  static const FusedRegion none;
  return none;
}

Model Build(ModelBuilder& b) {
  auto m = b.Build();
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return std::move(*m);
}

Model ConvModel(bool bn, bool relu) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, Shape{1, 8, 16, 16});
  {
    auto s = b.Scope("conv");
    x = b.ConvLayer(x, 8, 16, 3, 1, 1);
  }
  if (bn) {
    auto s = b.Scope("bn");
    x = b.BatchNormLayer(x, 16);
  }
  if (relu) {
    auto s = b.Scope("act");
    x = b.Relu(x);
  }
  b.Output(x, "y");
  return Build(b);
}

TEST(FusionMap, ConvReluBecomesFusedConv) {
  auto m = MapAt(ConvModel(false, true), OptLevel::kExtended);
  const auto& r = Fused(m, "FusedConv");
  EXPECT_THAT(r.covers, ElementsAre("/conv/Conv", "/act/Relu"));
  EXPECT_THAT(r.outputs, ElementsAre("y"));
  EXPECT_THAT(r.boundary, ElementsAre("x"));
}

TEST(FusionMap, ConvBatchNormFoldsIntoConv) {
  auto m = MapAt(ConvModel(true, false), OptLevel::kBasic);
  ASSERT_EQ(m.map.Fused().size(), 1u) << Describe(m.map);
  const auto& r = *m.map.Fused()[0];
  EXPECT_THAT(r.op_types, ElementsAre("Conv"));
  EXPECT_FALSE(r.unchanged);  // one Conv, but it covers the BatchNormalization too
  EXPECT_THAT(r.covers, ElementsAre("/conv/Conv", "/bn/BatchNormalization"));
}

// The reorders around it move data, they compute nothing: the layout aliases
// (layout_alias.h) leave them out of the region.
TEST(FusionMap, NchwcConvIsOneRegionWithoutItsReorders) {
  auto m = MapAt(ConvModel(true, true), OptLevel::kAll);
  const auto& r = Fused(m, "Conv", "com.microsoft.nchwc");
  EXPECT_THAT(r.op_types, ElementsAre("Conv"));
  EXPECT_THAT(r.covers, ElementsAre("/conv/Conv", "/bn/BatchNormalization", "/act/Relu"));
  EXPECT_THAT(r.outputs, ElementsAre("y"));
  EXPECT_EQ(r.op_types[r.MainNode()], "Conv");
}

TEST(FusionMap, MatMulAddBecomesGemm) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, Shape{4, 16});
  {
    auto s = b.Scope("fc");
    x = b.LinearLayer(x, 16, 8);
  }
  b.Output(b.Relu(x), "y");
  auto m = MapAt(Build(b), OptLevel::kBasic);
  const auto& r = Fused(m, "Gemm");
  EXPECT_THAT(r.covers, ElementsAre("/fc/MatMul", "/fc/Add"));
}

TEST(FusionMap, BiasGeluCoversTheAddAndTheDecomposedGelu) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, Shape{1, 4, 16});
  {
    auto s = b.Scope("mlp");
    x = b.Gelu(b.Add(x, b.RandomWeight("bias", {16}, 0.1f)));
  }
  b.Output(x, "y");
  auto m = MapAt(Build(b), OptLevel::kExtended);
  const auto& r = Fused(m, "BiasGelu");
  EXPECT_THAT(r.covers, ElementsAre("/mlp/Add", "/mlp/Div", "/mlp/Erf", "/mlp/Add_1", "/mlp/Mul", "/mlp/Mul_1"));
}

class TransformerFusions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { mapped_ = new Mapped(MapAt(TransformerBlock(), OptLevel::kAll)); }
  static void TearDownTestSuite() { delete mapped_; }
  static Mapped* mapped_;
};
Mapped* TransformerFusions::mapped_ = nullptr;

TEST_F(TransformerFusions, GeluFromErfForm) {
  const auto& r = Fused(*mapped_, "Gelu");
  EXPECT_THAT(r.covers, ElementsAre("/encoder/layer0/mlp/Div", "/encoder/layer0/mlp/Erf", "/encoder/layer0/mlp/Add",
                                    "/encoder/layer0/mlp/Mul", "/encoder/layer0/mlp/Mul_1"));
}

// The nine nodes ModelBuilder::LayerNorm writes under a scope, in order.
std::vector<std::string> LayerNormNodes(const std::string& scope) {
  std::vector<std::string> nodes;
  for (const char* op : {"ReduceMean", "Sub", "Pow", "ReduceMean_1", "Add", "Sqrt", "Div", "Mul", "Add_1"})
    nodes.push_back(scope + op);
  return nodes;
}

TEST_F(TransformerFusions, LayerNormalizationFromNineNodes) {
  const auto& r = Fused(*mapped_, "LayerNormalization");
  EXPECT_THAT(r.covers, ElementsAreArray(LayerNormNodes("/encoder/layer0/ln1/")));
}

TEST_F(TransformerFusions, SkipLayerNormalizationIncludesTheResidualAdd) {
  const auto& r = Fused(*mapped_, "SkipLayerNormalization");
  ASSERT_FALSE(r.covers.empty());
  // The residual Add that ends layer1, then the head's LayerNorm that reads it.
  std::vector<std::string> expected = {"/encoder/layer1/Add_1"};
  for (const auto& node : LayerNormNodes("/head/ln/")) expected.push_back(node);
  EXPECT_THAT(r.covers, ElementsAreArray(expected));
  EXPECT_THAT(r.boundary, ElementsAre("/encoder/layer1/Add_output_0", "/encoder/layer1/mlp/fc2/Add_output_0"));
}

TEST_F(TransformerFusions, SiluBecomesQuickGelu) {
  const auto& r = Fused(*mapped_, "QuickGelu");
  EXPECT_THAT(r.covers, ElementsAre("/head/proj/Sigmoid", "/head/proj/Mul"));
  EXPECT_THAT(r.outputs, ElementsAre("output"));
}

TEST_F(TransformerFusions, FusedMatMulTakesTheScale) {
  const auto& r = Fused(*mapped_, "FusedMatMul");
  EXPECT_THAT(r.covers, ElementsAre("/encoder/layer0/attn/MatMul", "/encoder/layer0/attn/Div"));
}

TEST_F(TransformerFusions, UnfusedNodesAreUnchangedAndEveryOutputIsMapped) {
  for (const auto& r : mapped_->map.regions)
    if (r.unchanged) {
      EXPECT_EQ(r.covers.size(), 1u);
    }
  for (const auto& node : mapped_->original.nodes)
    for (const auto& o : node.outputs)
      EXPECT_TRUE(mapped_->map.IsSurviving(o) || mapped_->map.fused_away.contains(o)) << o;
}

TEST(FusionMap, NothingFusesAtDisable) {
  auto m = MapAt(TransformerBlock(), OptLevel::kDisable);
  EXPECT_THAT(m.map.Fused(), IsEmpty()) << Describe(m.map);
  // At disable ORT keeps every node, so every node output of the original graph survives.
  size_t node_outputs = 0;
  for (const auto& node : m.original.nodes)
    for (const auto& o : node.outputs) node_outputs += !o.empty();
  EXPECT_EQ(m.map.surviving.size(), node_outputs);
}

}  // namespace
}  // namespace parity
