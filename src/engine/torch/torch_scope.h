// Which PyTorch module a node of an exported model came from, as the exporter
// recorded it. Structure, not values: what alignment trusts first.
//
// - torch's dynamo exporter writes node metadata (IR 10):
//   "pkg.torch.onnx.name_scopes" = "['', 'layer1', 'layer1.0', 'layer1.0.relu', 'relu_1']"
//   (the module path of each enclosing module call, root first, then the op)
//   and "pkg.torch.onnx.class_hierarchy" (their classes, then the op).
// - the TorchScript exporter names nodes after the scopes of the calls:
//   "/features/features.5/block/block.2/activation/Relu"; each component is
//   the module's path from its last non-numeric atom on ("block.2" is module
//   "features.5.block.2" under "features.5.block"), containers that were never
//   called add no component, and call k > 0 of a module adds "_k".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "onnx/graph.h"

namespace parity {

enum class ScopeSource {
  kNone,      // the node records no module (a root-level op, or no metadata)
  kMetadata,  // dynamo: node metadata_props
  kNodeName,  // TorchScript: the node's name
};
std::string_view ScopeSourceName(ScopeSource s);  // "none", "metadata", "node name"

struct ScopeLevel {
  std::string module;  // the full module path, "layer1.0.relu"
  int64_t call = 0;    // which call of that module (0 for the first)
  std::string type;    // the module's class when the exporter recorded it, else ""
};

struct NodeScope {
  ScopeSource source = ScopeSource::kNone;
  std::vector<ScopeLevel> levels;  // outermost first; the root module excluded

  // Whether call `call` of module `module` encloses the node.
  bool Within(std::string_view module, int64_t call) const;
  // The innermost module path, "" at the root.
  std::string_view Innermost() const { return levels.empty() ? std::string_view() : levels.back().module; }
};

// The module path of `node`. `known` holds module paths the PyTorch side saw
// (a dump's modules; may be empty): it decides whether a TorchScript component
// "relu_1" is module "relu_1" or call 1 of "relu". Never fails: a node whose
// record cannot be read has source kNone.
NodeScope ScopeOfNode(const GraphNode& node, const std::unordered_set<std::string>& known = {});

// The scopes of every node of `g` (same order as g.nodes).
std::vector<NodeScope> ScopesOf(const GraphView& g, const std::unordered_set<std::string>& known = {});

}  // namespace parity
