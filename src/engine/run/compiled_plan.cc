#include "engine/run/compiled_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_set>

namespace parity {
namespace {

bool IsKernelEp(std::string_view ep) { return ep == "CPUExecutionProvider" || ep == "CUDAExecutionProvider"; }

// One compiled subgraph as one node: what it reads from outside, what is
// read outside it.
GraphNode SubgraphNode(const GraphView& original, const std::vector<size_t>& members, const std::string& ep,
                       size_t k) {
  const std::unordered_set<size_t> inside(members.begin(), members.end());
  const std::unordered_set<std::string> initializers(original.initializers.begin(), original.initializers.end());
  const std::unordered_set<std::string> graph_outputs(original.outputs.begin(), original.outputs.end());
  GraphNode node{.name = fmt::format("{}_subgraph_{}", ep, k), .op_type = ep};
  std::set<std::string> seen;
  for (size_t i : members) {
    for (const std::string& t : original.nodes[i].inputs) {
      if (t.empty() || initializers.contains(t) || seen.contains(t)) continue;
      auto p = original.producer.find(t);
      if (p != original.producer.end() && inside.contains(p->second)) continue;
      seen.insert(t);
      node.inputs.push_back(t);
    }
  }
  for (size_t i : members) {
    for (const std::string& t : original.nodes[i].outputs) {
      if (t.empty()) continue;
      bool outside = graph_outputs.contains(t);
      auto c = original.consumers.find(t);
      if (c != original.consumers.end())
        for (size_t j : c->second) outside = outside || !inside.contains(j);
      if (outside) node.outputs.push_back(t);
    }
  }
  node.file_index = *std::min_element(members.begin(), members.end());
  return node;
}

// Kahn's algorithm over tensor names; ties keep the nodes' order in `nodes`.
std::vector<GraphNode> Topological(std::vector<GraphNode> nodes) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& t : nodes[i].outputs) producer[t] = i;
  std::vector<std::vector<size_t>> next(nodes.size());
  std::vector<int> pending(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<size_t> from;
    for (const std::string& t : nodes[i].inputs)
      if (auto p = producer.find(t); p != producer.end() && p->second != i) from.insert(p->second);
    for (size_t f : from) next[f].push_back(i);
    pending[i] = static_cast<int>(from.size());
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<GraphNode> out;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    out.push_back(std::move(nodes[i]));
    for (size_t j : next[i])
      if (--pending[j] == 0) ready.push(j);
  }
  return out;  // a cycle (not possible from ORT's partitioning) drops its nodes
}

}  // namespace

bool PlansFromAssignment(const RunConfig& config) {
  return std::any_of(config.providers.begin(), config.providers.end(),
                     [](const std::string& p) { return p != "cpu" && p != "cuda"; });
}

GraphView AssignedView(const GraphView& original, const std::vector<ort::EpAssignment>& assignment) {
  std::vector<std::pair<size_t, GraphNode>> placed;  // (first original index, node)
  size_t k = 0;
  for (const ort::EpAssignment& a : assignment) {
    std::vector<size_t> members;
    for (const std::string& name : a.nodes)
      if (auto i = original.FindNode(name)) members.push_back(*i);
    if (members.empty()) continue;
    if (IsKernelEp(a.ep)) {
      for (size_t i : members) placed.emplace_back(i, original.nodes[i]);
    } else {
      GraphNode node = SubgraphNode(original, members, a.ep, k++);
      placed.emplace_back(node.file_index, std::move(node));
    }
  }
  std::sort(placed.begin(), placed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<GraphNode> nodes;
  for (auto& [index, node] : placed) nodes.push_back(std::move(node));
  GraphView view;
  view.nodes = Topological(std::move(nodes));
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    view.node_index.emplace(view.nodes[i].name, i);
    for (const std::string& t : view.nodes[i].outputs)
      if (!t.empty()) view.producer[t] = i;
    for (const std::string& t : view.nodes[i].inputs)
      if (!t.empty()) view.consumers[t].push_back(i);
  }
  view.inputs = original.inputs;
  view.initializers = original.initializers;
  view.outputs = original.outputs;
  view.types = original.types;
  return view;
}

}  // namespace parity
