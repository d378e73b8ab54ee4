// The NCHWc layout mapped node by node (issue 53 item 2): synthetic plans of
// both block sizes (AVX2's 8 and AVX-512's 16 channels per block), a plan
// whose names contradict its structure, and ORT's own plan of a residual
// trunk on this machine.
#include "engine/run/layout_alias.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/run/fusion_map.h"
#include "engine/run/optimized_plan.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"

namespace parity {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr const char* kNchwc = "com.microsoft.nchwc";

GraphNode Node(std::string name, std::string op, std::string domain, std::vector<std::string> in,
               std::vector<std::string> out) {
  GraphNode n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// A view of `nodes` (already in topological order), indices built.
GraphView ViewOf(std::vector<GraphNode> nodes, std::vector<std::string> inits) {
  GraphView v;
  v.nodes = std::move(nodes);
  v.inputs = {"x"};
  v.initializers = std::move(inits);
  v.outputs = {"y"};
  return AliasedView(v, {});  // no aliases: only the indices are built
}

// A residual block: conv1+relu, conv2, the skip Add of relu's output, relu.
GraphView OriginalBlock() {
  return ViewOf({Node("/conv1/Conv", "Conv", "", {"x", "w1", "b1"}, {"c1"}),
                 Node("/relu/Relu", "Relu", "", {"c1"}, {"r1"}),
                 Node("/conv2/Conv", "Conv", "", {"r1", "w2", "b2"}, {"c2"}),
                 Node("/Add", "Add", "", {"c2", "r1"}, {"a"}),
                 Node("/relu_1/Relu", "Relu", "", {"a"}, {"y"})},
                {"w1", "b1", "w2", "b2"});
}

// ORT's NCHWc plan of OriginalBlock with `block` channels per block: the
// blocked tensors carry the padded channel count in their types.
GraphView NchwcPlan(int64_t block, const std::string& first_name, const std::string& second_name) {
  GraphView v = ViewOf({Node("ReorderInput", "ReorderInput", kNchwc, {"x"}, {"reorder_token_0"}),
                        Node(first_name, "Conv", kNchwc, {"reorder_token_0", "w1_nchwc", "b1"}, {"reorder_token_1"}),
                        Node(second_name, "Conv", kNchwc,
                             {"reorder_token_1", "w2_nchwc", "b2", "reorder_token_1"}, {"reorder_token_2"}),
                        Node("ReorderOutput", "ReorderOutput", kNchwc, {"reorder_token_2"}, {"y"})},
                       {"w1_nchwc", "b1", "w2_nchwc", "b2"});
  const int64_t padded = (20 + block - 1) / block * block;  // 20 channels: a multiple of neither
  for (const char* t : {"reorder_token_0", "reorder_token_1", "reorder_token_2"}) {
    TensorType type;
    type.has_shape = true;
    type.dims = {Dim::Known(1), Dim::Known(padded), Dim::Known(8), Dim::Known(8)};
    v.types.emplace(t, type);
  }
  return v;
}

std::string DescribeAliases(const FusionMap& m) {
  std::string s;
  for (const auto& r : m.regions) {
    s += r.OpSummary() + " [";
    for (const auto& c : r.covers) s += c + " ";
    s += "]\n";
  }
  return s;
}

TEST(LayoutAlias, EachNchwcConvIsItsOwnRegionOnBothBlockSizes) {
  const GraphView original = OriginalBlock();
  std::vector<std::string> described;
  for (int64_t block : {8, 16}) {
    const GraphView plan = NchwcPlan(block, "r1_nchwc", "c2_nchwc");
    const LayoutAliases aliases = FindLayoutAliases(original, plan);
    EXPECT_EQ(aliases.of_blocked.at("reorder_token_0"), "x");
    EXPECT_EQ(aliases.of_blocked.at("reorder_token_1"), "r1");  // carried over the folded Relu
    EXPECT_EQ(aliases.of_blocked.at("reorder_token_2"), "y");
    const FusionMap map = BuildFusionMap(original, plan);
    ASSERT_EQ(map.regions.size(), 2u) << DescribeAliases(map);
    EXPECT_THAT(map.regions[0].nodes, ElementsAre("r1_nchwc"));
    EXPECT_THAT(map.regions[0].covers, ElementsAre("/conv1/Conv", "/relu/Relu"));
    EXPECT_THAT(map.regions[1].nodes, ElementsAre("c2_nchwc"));
    EXPECT_THAT(map.regions[1].covers, ElementsAre("/conv2/Conv", "/Add", "/relu_1/Relu"));
    EXPECT_THAT(map.regions[1].inputs, ElementsAre("r1"));
    EXPECT_EQ(map.layout_sources.at("r1"), "reorder_token_1");  // what the fallback reorders back
    described.push_back(DescribeAliases(map));
  }
  EXPECT_EQ(described[0], described[1]);  // the block size changes nothing
}

TEST(LayoutAlias, TakenNameWithOrtsTokenSuffixStillAnchors) {
  const FusionMap map = BuildFusionMap(OriginalBlock(), NchwcPlan(16, "r1_nchwc_token_7", "c2_nchwc"));
  ASSERT_EQ(map.regions.size(), 2u) << DescribeAliases(map);
  EXPECT_THAT(map.regions[0].covers, ElementsAre("/conv1/Conv", "/relu/Relu"));
}

TEST(LayoutAlias, NamesThatContradictTheStructureFallBackToOneRegion) {
  // The two convs' names swapped: the first would hold c2, which its covered
  // nodes compute from x only through r1, and the second reads what does not
  // match; every inferred alias is dropped and the chain is one region again.
  const FusionMap map = BuildFusionMap(OriginalBlock(), NchwcPlan(8, "c2_nchwc", "r1_nchwc"));
  ASSERT_EQ(map.regions.size(), 1u) << DescribeAliases(map);
  EXPECT_THAT(map.regions[0].covers,
              ElementsAre("/conv1/Conv", "/relu/Relu", "/conv2/Conv", "/Add", "/relu_1/Relu"));
  EXPECT_THAT(map.layout_sources, IsEmpty());
}

TEST(LayoutAlias, PlanWithoutLayoutNodesHasNoAliases) {
  const GraphView original = OriginalBlock();
  EXPECT_TRUE(FindLayoutAliases(original, original).empty());
}

// ORT's own plan on this machine: every original Conv is covered by exactly
// one region, and no region holds more than one computing node.
TEST(LayoutAlias, OrtsResidualTrunkMapsOneNodeToOneRegion) {
  Model model = WithNodeNames(ResidualTrunk(4, 2));
  auto original = BuildGraphView(model, {.infer_shapes = false});
  ASSERT_TRUE(original.has_value());
  auto dir = ScratchDir::Create("layout_alias_test");
  ASSERT_TRUE(dir.has_value());
  RunConfig config;
  config.opt_level = OptLevel::kAll;
  auto map = PlanOf(model, *original, config, "trunk", *dir / "opt.onnx");
  ASSERT_TRUE(map.has_value()) << map.error().message();
  size_t nchwc_regions = 0, convs = 0;
  for (const auto& r : map->regions) {
    size_t computing = 0;
    for (size_t i = 0; i < r.op_types.size(); ++i)
      computing += r.op_types[i] != "ReorderInput" && r.op_types[i] != "ReorderOutput";
    EXPECT_LE(computing, 1u) << DescribeAliases(*map);
    nchwc_regions += std::count(r.domains.begin(), r.domains.end(), kNchwc) > 0;
    for (const auto& c : r.covers) convs += original->nodes[*original->FindNode(c)].op_type == "Conv";
  }
  size_t original_convs = 0;
  for (const auto& n : original->nodes) original_convs += n.op_type == "Conv";
  EXPECT_EQ(convs, original_convs) << DescribeAliases(*map);  // each once
  if (nchwc_regions == 0) GTEST_SKIP() << "ORT made no NCHWc plan here (not x86?)";
  EXPECT_GE(nchwc_regions, original_convs) << DescribeAliases(*map);
  const FusedRegion* skip = nullptr;  // a block's second conv, with the skip Add and Relu folded in
  for (const auto& r : map->regions)
    if (std::any_of(r.covers.begin(), r.covers.end(), [](const std::string& c) { return c.find("Add") != c.npos; }))
      skip = &r;
  ASSERT_NE(skip, nullptr) << DescribeAliases(*map);
  EXPECT_EQ(skip->op_types[skip->MainNode()], "Conv") << DescribeAliases(*map);
}

}  // namespace
}  // namespace parity
