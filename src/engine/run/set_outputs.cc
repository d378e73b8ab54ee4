#include "engine/run/set_outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "onnx/graph.h"

namespace parity {
namespace {

// Ops that select, reshape or rescale rows without mixing them.
bool KeepsRows(std::string_view op) {
  static const std::set<std::string_view> kOps = {
      "Gather",  "GatherND", "GatherElements", "Slice", "Squeeze", "Unsqueeze", "Reshape", "Flatten", "Cast",
      "Concat",  "Split",    "Identity",       "Add",   "Sub",     "Mul",       "Div",     "Clip",    "Min",
      "Max",     "Where",    "Expand",         "Round", "Floor",   "Ceil",      "Sigmoid", "Transpose"};
  return kOps.contains(op);
}

// The graph outputs the tensors `from` flow into through KeepsRows ops.
std::vector<std::string> ReachedOutputs(const GraphView& g, const std::vector<std::string>& from) {
  std::set<std::string> seen(from.begin(), from.end());
  std::vector<std::string> todo(from.begin(), from.end());
  while (!todo.empty()) {
    const std::string t = std::move(todo.back());
    todo.pop_back();
    const auto it = g.consumers.find(t);
    if (it == g.consumers.end()) continue;
    for (size_t i : it->second) {
      const GraphNode& n = g.nodes[i];
      if (!KeepsRows(n.op_type)) continue;
      for (const auto& o : n.outputs)
        if (!o.empty() && seen.insert(o).second) todo.push_back(o);
    }
  }
  std::vector<std::string> out;
  for (const auto& o : g.outputs)
    if (seen.contains(o)) out.push_back(o);
  return out;
}

// The elements per row of output `name` when its declared shape says it
// (rank 1: 1; [N, 4] or [1, N, 4]: the last dim); 0 when unknown.
int64_t RowWidth(const GraphView& g, const std::string& name) {
  const TensorType* t = g.Type(name);
  if (t == nullptr || !t->has_shape) return 0;
  if (t->dims.size() == 1) return 1;
  const Dim& last = t->dims.back();
  return t->dims.size() <= 3 && last.kind == Dim::Kind::kKnown ? last.value : 0;
}

bool IsFloatOutput(const GraphView& g, const std::string& name) {
  const TensorType* t = g.Type(name);
  return t != nullptr && t->dtype && IsFloating(*t->dtype);
}

}  // namespace

std::vector<SetValuedGroup> SetValuedOutputs(const Model& model) {
  std::vector<SetValuedGroup> groups;
  // Shape inference (for the outputs' row widths) only where a source is.
  auto plain = BuildGraphView(model, {.infer_shapes = false});
  if (!plain || std::none_of(plain->nodes.begin(), plain->nodes.end(), [](const GraphNode& n) {
        return n.op_type == "NonMaxSuppression" || n.op_type == "TopK";
      }))
    return groups;
  auto graph = BuildGraphView(model, {.infer_shapes = true});
  if (!graph) return groups;
  const GraphView& g = *graph;
  std::set<std::string> grouped;
  // NonMaxSuppression first: a TopK that picks its candidates reaches the
  // same outputs, which are NMS's detections.
  std::vector<const GraphNode*> sources;
  for (const char* op : {"NonMaxSuppression", "TopK"})
    for (const GraphNode& n : g.nodes)
      if (n.op_type == op) sources.push_back(&n);
  for (const GraphNode* source : sources) {
    const GraphNode& n = *source;
    std::vector<std::string> from;
    for (const auto& o : n.outputs)
      if (!o.empty()) from.push_back(o);
    if (n.op_type == "NonMaxSuppression") from.resize(std::min<size_t>(from.size(), 1));
    SetValuedGroup group{.source = fmt::format("{} '{}'", n.op_type, n.name)};
    for (const auto& o : ReachedOutputs(g, from))
      if (grouped.insert(o).second) group.outputs.push_back(o);
    // TopK's indices alone, or with its values: a group; a TopK whose
    // values alone are an output is a sorted array, judged as one.
    if (group.outputs.empty()) continue;
    if (n.op_type == "TopK" && n.outputs.size() > 1 &&
        std::find(group.outputs.begin(), group.outputs.end(), n.outputs[1]) == group.outputs.end() &&
        ReachedOutputs(g, {n.outputs[1]}).empty())
      continue;
    for (const auto& o : group.outputs) {
      if (!IsFloatOutput(g, o)) continue;
      const int64_t width = RowWidth(g, o);
      if (width == 1 && group.score.empty()) group.score = o;
      if (width == 4 && group.boxes.empty()) group.boxes = o;
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace parity
