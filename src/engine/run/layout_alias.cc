#include "engine/run/layout_alias.h"

#include <algorithm>
#include <regex>

namespace parity {

namespace {

constexpr const char* kNchwcDomain = "com.microsoft.nchwc";

bool IsReorder(const GraphNode& n) {
  return n.domain == kNchwcDomain && (n.op_type == "ReorderInput" || n.op_type == "ReorderOutput");
}

bool IsActivation(const std::string& op) {
  return op == "Relu" || op == "Clip" || op == "Sigmoid" || op == "Tanh" || op == "LeakyRelu" ||
         op == "HardSigmoid";
}

// "<tensor>_nchwc" or "<tensor>_nchwc_token_K" -> "<tensor>"; "" otherwise.
std::string AnchorOf(const std::string& node_name) {
  static const std::regex kName("^(.+)_nchwc(_token_[0-9]+)?$");
  std::smatch m;
  return std::regex_match(node_name, m, kName) ? m[1].str() : std::string();
}

bool IsOriginalTensor(const GraphView& original, const std::string& t) {
  return original.producer.contains(t) ||
         std::find(original.inputs.begin(), original.inputs.end(), t) != original.inputs.end();
}

struct Context {
  const GraphView& original;
  const GraphView& optimized;
  std::unordered_set<std::string> anchors;  // original tensors some optimized node is named after
};

// The original node reading `t` as its only reader, when it may have been
// folded into the node holding `t` (see the header); nullptr otherwise.
const GraphNode* FoldableReader(const Context& c, const std::string& t, bool want_add) {
  auto it = c.original.consumers.find(t);
  if (it == c.original.consumers.end() || it->second.size() != 1) return nullptr;
  if (std::find(c.original.outputs.begin(), c.original.outputs.end(), t) != c.original.outputs.end())
    return nullptr;
  const GraphNode& reader = c.original.nodes[it->second.front()];
  const bool kind = want_add ? (reader.op_type == "Add" || reader.op_type == "Sum") : IsActivation(reader.op_type);
  if (!kind || reader.outputs.empty() || reader.outputs.front().empty()) return nullptr;
  if (c.optimized.FindNode(reader.name)) return nullptr;  // the plan keeps it
  const std::string& out = reader.outputs.front();
  if (c.optimized.producer.contains(out) || c.anchors.contains(out)) return nullptr;
  return &reader;
}

// What the output of a node named after `anchor` holds: `anchor`, carried
// over a folded Add (when the node reads a Sum input) and an activation.
std::string CarryForward(const Context& c, const GraphNode& node, std::string t) {
  const bool has_sum = node.inputs.size() >= 4 && !node.inputs[3].empty();
  if (has_sum) {
    const GraphNode* add = FoldableReader(c, t, true);
    if (add == nullptr) return {};  // a Sum input with no Add to fold: not understood
    t = add->outputs.front();
  }
  if (const GraphNode* act = FoldableReader(c, t, false)) t = act->outputs.front();
  return t;
}

void AliasFromName(const Context& c, const GraphNode& node, LayoutAliases& a) {
  if (node.outputs.empty() || node.outputs.front().empty() || IsOriginalTensor(c.original, node.outputs.front()))
    return;
  const std::string anchor = AnchorOf(node.name);
  if (!anchor.empty() && c.original.producer.contains(anchor)) {
    if (node.outputs.size() != 1) return;
    std::string holds = CarryForward(c, node, anchor);
    if (!holds.empty() && a.of_blocked.try_emplace(node.outputs.front(), holds).second)
      a.inferred.insert(node.outputs.front());
    return;
  }
  // A node the transform kept with blocked inputs and outputs.
  auto kept = c.original.FindNode(node.name);
  if (!kept) return;
  const GraphNode& orig = c.original.nodes[*kept];
  if (orig.op_type != node.op_type || orig.outputs.size() != node.outputs.size()) return;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const std::string& t = node.outputs[i];
    if (t.empty() || orig.outputs[i].empty() || IsOriginalTensor(c.original, t)) continue;
    if (a.of_blocked.try_emplace(t, orig.outputs[i]).second) a.inferred.insert(t);
  }
}

}  // namespace

LayoutAliases FindLayoutAliases(const GraphView& original, const GraphView& optimized) {
  LayoutAliases a;
  bool layout = false;
  for (const auto& n : optimized.nodes) layout = layout || n.domain == kNchwcDomain;
  if (!layout) return a;
  // Certain first: what the reorders say.
  for (const auto& n : optimized.nodes) {
    if (!IsReorder(n) || n.inputs.empty() || n.outputs.empty()) continue;
    if (n.op_type == "ReorderOutput" && IsOriginalTensor(original, n.outputs[0]))
      a.of_blocked.try_emplace(n.inputs[0], n.outputs[0]);
    if (n.op_type == "ReorderInput" && IsOriginalTensor(original, n.inputs[0]))
      a.of_blocked.try_emplace(n.outputs[0], n.inputs[0]);
  }
  Context c{original, optimized, {}};
  for (const auto& n : optimized.nodes)
    if (std::string anchor = AnchorOf(n.name); !anchor.empty()) c.anchors.insert(anchor);
  for (const auto& n : optimized.nodes)
    if (!IsReorder(n)) AliasFromName(c, n, a);
  return a;
}

GraphView AliasedView(const GraphView& optimized, const LayoutAliases& aliases) {
  auto rename = [&](std::string& t) {
    if (auto it = aliases.of_blocked.find(t); it != aliases.of_blocked.end()) t = it->second;
  };
  GraphView v;
  v.inputs = optimized.inputs;
  v.initializers = optimized.initializers;
  v.outputs = optimized.outputs;
  for (auto& t : v.outputs) rename(t);
  for (const auto& [name, type] : optimized.types)
    if (!aliases.of_blocked.contains(name)) v.types.emplace(name, type);
  for (GraphNode n : optimized.nodes) {
    for (auto& t : n.inputs) rename(t);
    for (auto& t : n.implicit_inputs) rename(t);
    for (auto& t : n.outputs) rename(t);
    if (IsReorder(n) && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] == n.outputs[0]) continue;
    const size_t i = v.nodes.size();
    for (const auto& t : n.inputs)
      if (!t.empty()) v.consumers[t].push_back(i);
    for (const auto& t : n.implicit_inputs)
      if (!t.empty()) v.consumers[t].push_back(i);
    for (const auto& t : n.outputs)
      if (!t.empty()) v.producer.try_emplace(t, i);
    v.node_index.try_emplace(n.name, i);
    v.nodes.push_back(std::move(n));
  }
  return v;
}

}  // namespace parity
