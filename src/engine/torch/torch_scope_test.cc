#include "engine/torch/torch_scope.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

GraphNode Named(std::string name) {
  GraphNode n;
  n.name = std::move(name);
  n.op_type = "Relu";
  return n;
}

std::vector<std::string> Modules(const NodeScope& s) {
  std::vector<std::string> out;
  for (const auto& l : s.levels) out.push_back(l.call ? l.module + "#" + std::to_string(l.call) : l.module);
  return out;
}

TEST(TorchScope, TorchScriptNamesIncludeContainerComponents) {
  const NodeScope s = ScopeOfNode(Named("/features/features.5/block/block.2/activation/Relu"));
  EXPECT_EQ(s.source, ScopeSource::kNodeName);
  EXPECT_EQ(Modules(s), (std::vector<std::string>{"features", "features.5", "features.5.block", "features.5.block.2",
                                                  "features.5.block.2.activation"}));
  EXPECT_EQ(s.Innermost(), "features.5.block.2.activation");
  // Nested Sequentials: each component repeats the head atom.
  EXPECT_EQ(Modules(ScopeOfNode(Named("/stage2/stage2.0/stage2.0.0/Conv"))),
            (std::vector<std::string>{"stage2", "stage2.0", "stage2.0.0"}));
  EXPECT_EQ(Modules(ScopeOfNode(Named("/0/0.1/Relu"))), (std::vector<std::string>{"0", "0.1"}));
}

TEST(TorchScope, TorchScriptCallNumbersAndUncalledContainers) {
  EXPECT_EQ(Modules(ScopeOfNode(Named("/layer1/layer1.0/relu_1/Relu"))),
            (std::vector<std::string>{"layer1", "layer1.0", "layer1.0.relu#1"}));
  // A ModuleList is never called: "layers.0" hangs under "encoder".
  EXPECT_EQ(Modules(ScopeOfNode(Named("/encoder/layers.0/self_attn/MatMul"))),
            (std::vector<std::string>{"encoder", "encoder.layers.0", "encoder.layers.0.self_attn"}));
  // A module really named "conv_1" is kept when the dump knows it.
  EXPECT_EQ(Modules(ScopeOfNode(Named("/conv_1/Conv"), {"conv_1"})), (std::vector<std::string>{"conv_1"}));
  EXPECT_EQ(Modules(ScopeOfNode(Named("/conv_1/Conv"), {"conv"})), (std::vector<std::string>{"conv#1"}));
}

TEST(TorchScope, RootOpsAndOtherNamesHaveNoModule) {
  EXPECT_TRUE(ScopeOfNode(Named("/Add")).levels.empty());
  EXPECT_EQ(ScopeOfNode(Named("/Add")).source, ScopeSource::kNodeName);
  EXPECT_EQ(ScopeOfNode(Named("Conv_12")).source, ScopeSource::kNone);
  EXPECT_EQ(ScopeOfNode(Named("//x/Relu")).source, ScopeSource::kNone);
  GraphNode synthesized = Named("/a/Relu");
  synthesized.name_synthesized = true;
  EXPECT_EQ(ScopeOfNode(synthesized).source, ScopeSource::kNone);
}

TEST(TorchScope, DynamoMetadataGivesModulesAndClasses) {
  GraphNode n = Named("node_Conv_9");
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', 'layer1', 'layer1.0', 'layer1.0.bn1', '_native_batch_norm_1']"},
                {"pkg.torch.onnx.class_hierarchy",
                 "['torchvision.models.resnet.ResNet', 'torch.nn.modules.container.Sequential', "
                 "'torchvision.models.resnet.BasicBlock', 'torch.nn.modules.batchnorm.BatchNorm2d', "
                 "'aten._native_batch_norm_legit_no_training.default']"}};
  const NodeScope s = ScopeOfNode(n);
  EXPECT_EQ(s.source, ScopeSource::kMetadata);
  EXPECT_EQ(Modules(s), (std::vector<std::string>{"layer1", "layer1.0", "layer1.0.bn1"}));
  EXPECT_EQ(s.levels.back().type, "BatchNorm2d");
  EXPECT_TRUE(s.Within("layer1.0", 0));
  EXPECT_FALSE(s.Within("layer1.0", 1));
}

TEST(TorchScope, DynamoRootOpAndUnreadableMetadata) {
  GraphNode root = Named("node_add");
  root.metadata = {{"pkg.torch.onnx.name_scopes", "['', 'add']"}};
  EXPECT_EQ(ScopeOfNode(root).source, ScopeSource::kMetadata);
  EXPECT_TRUE(ScopeOfNode(root).levels.empty());
  GraphNode bad = Named("/a/Relu");
  bad.metadata = {{"pkg.torch.onnx.name_scopes", "not a list"}};
  // Unreadable metadata: the node name is the next witness.
  EXPECT_EQ(ScopeOfNode(bad).source, ScopeSource::kNodeName);
}

}  // namespace
}  // namespace parity
