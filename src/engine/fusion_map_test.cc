// The fusion map on the fusions ORT 1.29 makes on CPU: each test builds the
// unfused pattern with the model builder, lets ORT optimize it, and checks
// which original nodes the fused node covers.
#include "engine/fusion_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/optimized_plan.h"
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

// The one fused region whose op summary contains `op`.
const FusedRegion* FindFused(const FusionMap& m, const std::string& op) {
  const FusedRegion* found = nullptr;
  for (const auto* r : m.Fused())
    for (const auto& t : r->op_types)
      if (t == op) found = r;
  return found;
}

TEST(FusionMap, Describe) {
  for (auto level : {OptLevel::kBasic, OptLevel::kExtended, OptLevel::kAll}) {
    auto cnn = MapAt(ResidualCnn(), level);
    std::printf("ResidualCnn %s\n%s", std::string(OptLevelName(level)).c_str(), Describe(cnn.map).c_str());
    auto tr = MapAt(TransformerBlock(), level);
    std::printf("Transformer %s\n%s", std::string(OptLevelName(level)).c_str(), Describe(tr.map).c_str());
  }
}

}  // namespace
}  // namespace parity
