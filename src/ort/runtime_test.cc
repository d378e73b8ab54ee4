#include "ort/runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ort/optimizer_log.h"
#include "ort/providers.h"

namespace parity::ort {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::StartsWith;

TEST(OrtRuntime, ReportsLinkedVersion) { EXPECT_THAT(OrtVersion(), StartsWith("1.")); }

TEST(OrtRuntime, CpuProviderIsAlwaysAvailable) {
  EXPECT_THAT(AvailableProviders(), Contains("CPUExecutionProvider"));
}

TEST(OrtRuntime, ConsoleLoggingIsOffByDefaultAndToggles) {
  EXPECT_FALSE(ConsoleLoggingEnabled());
  SetConsoleLogging(true);
  EXPECT_TRUE(ConsoleLoggingEnabled());
  SetConsoleLogging(false);
  EXPECT_FALSE(ConsoleLoggingEnabled());
}

TEST(OptimizerLog, ParsesModifiedLine) {
  auto e = ParseOptimizerLine("GraphTransformer BiasGeluFusion modified: 1 with status: OK");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->name, "BiasGeluFusion");
  EXPECT_TRUE(e->modified);
}

TEST(OptimizerLog, ParsesUnmodifiedLine) {
  auto e = ParseOptimizerLine("GraphTransformer Level1_RuleBasedTransformer modified: 0 with status: OK");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->name, "Level1_RuleBasedTransformer");
  EXPECT_FALSE(e->modified);
}

TEST(OptimizerLog, IgnoresOtherLines) {
  EXPECT_FALSE(ParseOptimizerLine("Applying graph transformer ConstantFolding on step 1.").has_value());
  EXPECT_FALSE(ParseOptimizerLine("Removing initializer 'b'. It is no longer used by any node.").has_value());
  EXPECT_FALSE(ParseOptimizerLine("GraphTransformer X modified: yes").has_value());
  EXPECT_FALSE(ParseOptimizerLine("").has_value());
}

TEST(OptimizerLog, ListsEachModifyingOptimizerOnceInOrder) {
  std::vector<std::string> lines = {
      "GraphTransformer ConstantFolding modified: 0 with status: OK",
      "GraphTransformer ConvActivationFusion modified: 1 with status: OK",
      "Graph transformer step 1 of 10 for level 2 completed. graph_changed: 1.",
      "GraphTransformer NchwcTransformer modified: 1 with status: OK",
      "GraphTransformer ConvActivationFusion modified: 1 with status: OK",
  };
  EXPECT_THAT(ModifiedOptimizers(lines), ElementsAre("ConvActivationFusion", "NchwcTransformer"));
}

TEST(Providers, MapsShortAndOrtNames) {
  EXPECT_EQ(ProviderOrtName("cuda"), "CUDAExecutionProvider");
  EXPECT_EQ(ProviderOrtName("CPU"), "CPUExecutionProvider");
  EXPECT_EQ(ProviderOrtName("TensorrtExecutionProvider"), "TensorrtExecutionProvider");
  EXPECT_FALSE(ProviderOrtName("gpu").has_value());
  EXPECT_EQ(ProviderShortName("CUDAExecutionProvider"), "cuda");
  EXPECT_EQ(ProviderShortName("FancyExecutionProvider"), "FancyExecutionProvider");
}

}  // namespace
}  // namespace parity::ort
