#include "engine/torch/module_paths.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

const std::vector<std::string> kInner = {"model.0", "model.0.conv", "model.4", "model.4.m.1", "model.4.m.1.cv1",
                                         "model.4.m.1.cv1.conv", "model.22"};

std::vector<std::string> Wrapped(const std::vector<std::string>& paths, const std::string& prefix) {
  std::vector<std::string> out = {prefix.substr(0, prefix.size() - 1)};  // the wrapper's child itself
  for (const auto& p : paths) out.push_back(prefix + p);
  return out;
}

std::unordered_set<std::string> Set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

TEST(ModulePaths, AgreeingPathsKeepTheIdentity) {
  const ModulePathMap map = InferModulePathMap(kInner, Set(kInner));
  EXPECT_TRUE(map.Identity());
  EXPECT_EQ(map.in_export, kInner.size());
  EXPECT_EQ(map.as_is, kInner.size());
  EXPECT_EQ(map.ToExport("model.4.m.1"), "model.4.m.1");
}

TEST(ModulePaths, ADumpThroughAWrapperLosesItsPrefix) {
  // YOLO(...) dumped (model.model.4...) against its DetectionModel's export (model.4...).
  const ModulePathMap map = InferModulePathMap(Wrapped(kInner, "model."), Set(kInner));
  EXPECT_EQ(map.strip, "model.");
  EXPECT_EQ(map.add, "");
  EXPECT_EQ(map.dumped, kInner.size() + 1);
  EXPECT_EQ(map.in_export, kInner.size());
  EXPECT_EQ(map.ToExport("model.model.4.m.1.cv1"), "model.4.m.1.cv1");
  EXPECT_EQ(map.ToExport("model"), "");                 // the exported module itself: the root
  EXPECT_EQ(map.ToExport("preprocess.norm"), std::nullopt);  // beside the exported module
  EXPECT_EQ(map.ToDump("model.4.m.1.cv1"), "model.model.4.m.1.cv1");
  EXPECT_EQ(map.ToDump(""), "model");
  EXPECT_NE(map.Describe().find("lose the prefix 'model.'"), std::string::npos) << map.Describe();
}

TEST(ModulePaths, AnExportThroughAWrapperGainsThePrefixAtAnyDepth) {
  const ModulePathMap map = InferModulePathMap(kInner, Set(Wrapped(Wrapped(kInner, "net."), "outer.")));
  EXPECT_EQ(map.strip, "");
  EXPECT_EQ(map.add, "outer.net.");
  EXPECT_EQ(map.in_export, kInner.size());
  EXPECT_EQ(map.ToExport("model.4"), "outer.net.model.4");
  EXPECT_EQ(map.ToDump("outer.net.model.4"), "model.4");
  EXPECT_EQ(map.ToDump("outer"), "outer");  // no dumped counterpart: unchanged
}

TEST(ModulePaths, APrefixMustMatchMoreThanThePathsAsTheyAre) {
  // One stray coincidence ("m.1" exists under a stripped "model.4.") does not
  // outvote the paths that agree as they are.
  std::vector<std::string> exported = kInner;
  exported.push_back("m.1");
  const ModulePathMap map = InferModulePathMap(kInner, Set(exported));
  EXPECT_TRUE(map.Identity());
  // Nothing in common: the identity, with nothing in the export.
  const ModulePathMap none = InferModulePathMap(kInner, Set({"encoder.layer.0"}));
  EXPECT_TRUE(none.Identity());
  EXPECT_EQ(none.in_export, 0u);
}

}  // namespace
}  // namespace parity
