// The pure half of the drill-down (drilldown.h): groups, the tensors of a
// range of nodes, and where a range can be cut.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "engine/locate/drilldown.h"

namespace parity {

namespace {

bool IsConstant(const GraphNode& n) { return n.op_type == "Constant" && n.domain.empty(); }

}  // namespace

DrillNodes GroupNodes(const GraphView& view, const FusionMap& groups) {
  std::unordered_map<std::string, int> group_of;
  for (size_t g = 0; g < groups.regions.size(); ++g)
    for (const auto& name : groups.regions[g].covers) group_of.try_emplace(name, static_cast<int>(g));
  DrillNodes d;
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    if (IsConstant(view.nodes[i])) continue;
    auto it = group_of.find(view.nodes[i].name);
    d.nodes.push_back(i);
    d.group.push_back(it == group_of.end() ? -1 : it->second);
  }
  // A group's nodes need not be adjacent in the file's order (a residual
  // block's Conv+Add+Relu with the projection Conv between them): each group
  // moves to where its last node is, so that groups are contiguous and can be
  // cut apart. Kept only when that order is still topological.
  std::unordered_map<int, size_t> last;
  for (size_t i = 0; i < d.nodes.size(); ++i)
    if (d.group[i] >= 0) last[d.group[i]] = i;
  std::vector<size_t> order(d.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](size_t i) { return d.group[i] >= 0 ? last[d.group[i]] : i; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::unordered_map<size_t, size_t> new_pos;  // view index -> position in the new order
  for (size_t p = 0; p < order.size(); ++p) new_pos[d.nodes[order[p]]] = p;
  for (size_t p = 0; p < order.size(); ++p) {
    const GraphNode& n = view.nodes[d.nodes[order[p]]];
    for (const auto* list : {&n.inputs, &n.implicit_inputs})
      for (const auto& t : *list) {
        auto prod = view.producer.find(t);
        if (prod == view.producer.end()) continue;
        auto q = new_pos.find(prod->second);
        if (q != new_pos.end() && q->second >= p) return d;  // not topological: the file's order
      }
  }
  DrillNodes grouped;
  for (size_t i : order) {
    grouped.nodes.push_back(d.nodes[i]);
    grouped.group.push_back(d.group[i]);
  }
  return grouped;
}

size_t CountGroups(const DrillNodes& d, size_t lo, size_t hi) {
  std::unordered_set<int> seen;
  for (size_t i = lo; i < hi && i < d.group.size(); ++i)
    if (d.group[i] >= 0) seen.insert(d.group[i]);
  return seen.size();
}

RangeTensors TensorsOfRange(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi,
                            const std::vector<std::string>& region_outputs) {
  const std::unordered_set<std::string> initializers(view.initializers.begin(), view.initializers.end());
  std::unordered_set<std::string> produced;
  for (size_t i = lo; i < hi; ++i)
    for (const auto& o : view.nodes[d.nodes[i]].outputs)
      if (!o.empty()) produced.insert(o);
  RangeTensors r;
  std::unordered_set<std::string> seen;
  const auto reads = [](const GraphNode& n, auto&& f) {
    for (const auto* list : {&n.inputs, &n.implicit_inputs})
      for (const auto& t : *list)
        if (!t.empty()) f(t);
  };
  for (size_t i = lo; i < hi; ++i)
    reads(view.nodes[d.nodes[i]], [&](const std::string& t) {
      if (produced.contains(t) || initializers.contains(t) || !seen.insert(t).second) return;
      if (const GraphNode* p = view.Producer(t); p != nullptr && IsConstant(*p)) return;
      r.inputs.push_back(t);
    });
  std::unordered_set<std::string> wanted;
  for (const auto& t : region_outputs)
    if (produced.contains(t)) wanted.insert(t);
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    if (i >= lo && i < hi) continue;
    reads(view.nodes[d.nodes[i]], [&](const std::string& t) {
      if (produced.contains(t)) wanted.insert(t);
    });
  }
  for (size_t i = lo; i < hi; ++i)
    for (const auto& o : view.nodes[d.nodes[i]].outputs)
      if (!o.empty() && wanted.erase(o)) r.outputs.push_back(o);
  return r;
}

std::vector<size_t> CandidateCuts(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi,
                                  const std::vector<std::string>& region_outputs) {
  std::unordered_map<int, std::pair<size_t, size_t>> span;  // group -> [first, last] position
  for (size_t i = lo; i < hi; ++i) {
    if (d.group[i] < 0) continue;
    auto [it, fresh] = span.try_emplace(d.group[i], i, i);
    if (!fresh) it->second.second = i;
  }
  const size_t total = span.size();
  // One cut per split of the groups (the fewest crossing tensors), keyed by
  // the groups on the left.
  std::map<size_t, std::pair<size_t, size_t>> best;  // left groups -> (crossing, position)
  for (size_t p = lo + 1; p < hi; ++p) {
    size_t left = 0;
    bool splits = false;
    for (const auto& [g, s] : span) {
      if (s.first < p && s.second >= p) splits = true;
      left += s.second < p;
    }
    if (splits || left == 0 || left == total) continue;
    const size_t crossing = TensorsOfRange(view, d, lo, p, region_outputs).outputs.size();
    auto it = best.find(left);
    if (it == best.end() || crossing < it->second.first) best[left] = {crossing, p};
  }
  std::vector<std::pair<std::pair<size_t, size_t>, size_t>> ranked;  // ((imbalance, crossing), position)
  for (const auto& [left, cp] : best) {
    const size_t imbalance = left > total - left ? left - (total - left) : (total - left) - left;
    ranked.push_back({{imbalance, cp.first}, cp.second});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<size_t> cuts;
  for (const auto& r : ranked) cuts.push_back(r.second);
  return cuts;
}

}  // namespace parity
