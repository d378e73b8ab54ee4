#include "onnx/model_internal.h"

#include <fmt/format.h>

namespace parity::onnx_adapter {

int64_t DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

std::unordered_set<std::string> DefinedNames(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> names;
  for (const auto& i : graph.input()) names.insert(i.name());
  for (const auto& t : graph.initializer()) names.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) names.insert(t.values().name());
  for (const auto& n : graph.node())
    for (const auto& o : n.output())
      if (!o.empty()) names.insert(o);
  return names;
}

Status CheckReferences(const onnx::GraphProto& graph) {
  const auto defined = DefinedNames(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    for (const auto& in : n.input()) {
      if (in.empty() || defined.contains(in)) continue;  // "" is an omitted optional input
      const std::string name = n.name().empty() ? fmt::format("#{}", i) : n.name();
      return InvalidArgument(
          fmt::format("node '{}' ({}) reads tensor '{}' that no node, graph input or initializer produces",
                      name, n.op_type(), in));
    }
  }
  for (const auto& o : graph.output())
    if (!defined.contains(o.name()))
      return InvalidArgument(
          fmt::format("graph output '{}' is not produced by any node, input or initializer", o.name()));
  return {};
}

}  // namespace parity::onnx_adapter
