#include "engine/run/fusion_map.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "engine/run/layout_alias.h"

namespace parity {

namespace {

std::string NormalDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

// Data movement that fusions wrap around the computing node.
bool IsPlumbing(const std::string& op) {
  return op == "ReorderInput" || op == "ReorderOutput" || op == "Reshape" || op == "Transpose" ||
         op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Cast";
}

struct UnionFind {
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t Find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
  std::vector<size_t> parent;
};

}  // namespace

std::string FusedRegion::OpSummary() const {
  std::string s;
  for (size_t i = 0; i < op_types.size(); ++i) s += (i ? "+" : "") + op_types[i];
  return s;
}

size_t FusedRegion::MainNode() const {
  for (size_t i = 0; i < op_types.size(); ++i)
    if (!IsPlumbing(op_types[i])) return i;
  return 0;
}

std::vector<const FusedRegion*> FusionMap::Fused() const {
  std::vector<const FusedRegion*> out;
  for (const auto& r : regions)
    if (!r.unchanged) out.push_back(&r);
  return out;
}

const FusedRegion* FusionMap::RegionOf(const std::string& tensor) const {
  auto it = region_of_output.find(tensor);
  return it == region_of_output.end() ? nullptr : &regions[it->second];
}

std::string RegionSignature(const FusedRegion& region) {
  std::string s;
  for (size_t i = 0; i < region.op_types.size(); ++i)
    s += (i ? "+" : "") + region.op_types[i] + "|" + region.domains[i];
  s += " ->";
  for (const auto& o : region.outputs) s += " " + o;
  return s;
}

namespace {

// The tensor sets of the original graph the map is built from.
struct OriginalTensors {
  std::unordered_set<std::string> initializers;
  std::unordered_set<std::string> inputs;
  std::unordered_set<std::string> surviving;  // node outputs the optimized graph still produces
};

// Optimized nodes joined through the tensors that did not survive: each
// group's node indices in topological order, groups in the order of their
// first node.
std::vector<std::vector<size_t>> GroupOptimizedNodes(const GraphView& optimized,
                                                     const std::unordered_set<std::string>& surviving) {
  UnionFind uf(optimized.nodes.size());
  for (size_t i = 0; i < optimized.nodes.size(); ++i) {
    const auto& node = optimized.nodes[i];
    for (const auto* list : {&node.inputs, &node.implicit_inputs})
      for (const auto& t : *list) {
        if (t.empty() || surviving.contains(t)) continue;
        if (auto it = optimized.producer.find(t); it != optimized.producer.end()) uf.Join(i, it->second);
      }
  }
  std::unordered_map<size_t, size_t> group_of_root;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < optimized.nodes.size(); ++i) {
    auto [it, fresh] = group_of_root.try_emplace(uf.Find(i), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

// A group's optimized nodes, what they read and which surviving tensors
// (original order) they produce.
// `surviving_position`: each surviving tensor's place in the original order
// (one scan of that list per group made a 100k-node chain quadratic).
FusedRegion DescribeGroup(const std::vector<size_t>& idx, const GraphView& optimized, const OriginalTensors& orig,
                          const std::vector<std::string>& surviving_in_order,
                          const std::unordered_map<std::string, size_t>& surviving_position) {
  FusedRegion r;
  std::unordered_set<std::string> produced, seen_inputs;
  for (size_t i : idx) {
    const auto& node = optimized.nodes[i];
    r.nodes.push_back(node.name);
    r.op_types.push_back(node.op_type);
    r.domains.push_back(NormalDomain(node.domain));
    for (const auto& o : node.outputs)
      if (!o.empty()) produced.insert(o);
  }
  for (size_t i : idx)
    for (const auto* list : {&optimized.nodes[i].inputs, &optimized.nodes[i].implicit_inputs})
      for (const auto& t : *list)
        if (!t.empty() && !produced.contains(t) && (orig.surviving.contains(t) || orig.inputs.contains(t)) &&
            seen_inputs.insert(t).second)
          r.inputs.push_back(t);
  std::vector<size_t> positions;
  for (const auto& t : produced)
    if (auto it = surviving_position.find(t); it != surviving_position.end()) positions.push_back(it->second);
  std::sort(positions.begin(), positions.end());
  for (size_t p : positions) r.outputs.push_back(surviving_in_order[p]);
  return r;
}

// Walks back from the region's outputs in the original graph through tensors
// that did not survive: the original nodes it covers (sorted, unique) and,
// into r.boundary, where the walk stopped.
std::vector<size_t> WalkBack(const GraphView& original, const OriginalTensors& orig, FusedRegion& r) {
  const std::unordered_set<std::string> own(r.outputs.begin(), r.outputs.end());
  std::vector<size_t> covered;
  std::unordered_set<std::string> seen;
  std::unordered_set<std::string> boundary_seen;
  std::vector<std::string> stack(r.outputs.rbegin(), r.outputs.rend());
  while (!stack.empty()) {
    std::string t = std::move(stack.back());
    stack.pop_back();
    if (t.empty() || !seen.insert(t).second) continue;
    const bool stop = orig.initializers.contains(t) || orig.inputs.contains(t) ||
                      (orig.surviving.contains(t) && !own.contains(t));
    if (stop) {
      if (!orig.initializers.contains(t) && boundary_seen.insert(t).second) r.boundary.push_back(t);
      continue;
    }
    auto it = original.producer.find(t);
    if (it == original.producer.end()) continue;
    covered.push_back(it->second);
    const auto& node = original.nodes[it->second];
    for (auto in = node.implicit_inputs.rbegin(); in != node.implicit_inputs.rend(); ++in) stack.push_back(*in);
    for (auto in = node.inputs.rbegin(); in != node.inputs.rend(); ++in) stack.push_back(*in);
  }
  std::sort(covered.begin(), covered.end());
  covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
  return covered;
}

// Which region produces each surviving tensor, and which region's walk
// covered each tensor that did not survive (-1: none did).
void IndexRegions(const GraphView& original, const OriginalTensors& orig, FusionMap& map) {
  for (size_t i = 0; i < map.regions.size(); ++i) {
    const auto& r = map.regions[i];
    for (const auto& o : r.outputs) map.region_of_output.emplace(o, i);
    for (const auto& name : r.covers) {
      auto n = original.FindNode(name);
      if (!n) continue;
      for (const auto& o : original.nodes[*n].outputs)
        if (!o.empty() && !orig.surviving.contains(o)) map.fused_away.try_emplace(o, static_cast<int>(i));
    }
  }
  for (const auto& node : original.nodes)
    for (const auto& o : node.outputs)
      if (!o.empty() && !orig.surviving.contains(o)) map.fused_away.try_emplace(o, -1);
}

// The map by tensor names alone.
FusionMap MapByNames(const GraphView& original, const GraphView& optimized) {
  FusionMap map;
  OriginalTensors orig{.initializers = {original.initializers.begin(), original.initializers.end()},
                       .inputs = {original.inputs.begin(), original.inputs.end()}};
  for (const auto& node : original.nodes)
    for (const auto& o : node.outputs)
      if (!o.empty() && optimized.producer.contains(o)) {
        orig.surviving.insert(o);
        map.surviving.push_back(o);
      }

  std::unordered_map<std::string, size_t> surviving_position;
  for (size_t i = 0; i < map.surviving.size(); ++i) surviving_position.try_emplace(map.surviving[i], i);
  for (const auto& idx : GroupOptimizedNodes(optimized, orig.surviving)) {
    FusedRegion r = DescribeGroup(idx, optimized, orig, map.surviving, surviving_position);
    if (r.outputs.empty()) continue;  // dead nodes: nothing of the original survives through them
    const std::vector<size_t> covered = WalkBack(original, orig, r);
    for (size_t c : covered) r.covers.push_back(original.nodes[c].name);
    r.first_original_index = covered.empty() ? original.nodes.size() : covered.front();
    if (idx.size() == 1 && covered.size() == 1) {
      const auto& a = optimized.nodes[idx[0]];
      const auto& b = original.nodes[covered[0]];
      r.unchanged = a.op_type == b.op_type && NormalDomain(a.domain) == NormalDomain(b.domain) &&
                    a.outputs == b.outputs;
    }
    map.regions.push_back(std::move(r));
  }
  std::stable_sort(map.regions.begin(), map.regions.end(), [&](const FusedRegion& a, const FusedRegion& b) {
    return a.first_original_index < b.first_original_index;
  });
  IndexRegions(original, orig, map);
  return map;
}


// Whether a region split off by an inferred layout alias reads exactly the
// tensors its covered original nodes read from outside (layout_alias.h).
bool ReadsWhatItCovers(const FusedRegion& r) {
  std::vector<std::string> a = r.inputs, b = r.boundary;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// The inferred aliases a region touches (holds in its inputs or outputs).
void CollectInferred(const FusedRegion& r, const std::unordered_map<std::string, std::vector<std::string>>& blocked_of,
                     const LayoutAliases& aliases, std::unordered_set<std::string>& out) {
  for (const auto* list : {&r.outputs, &r.inputs})
    for (const auto& t : *list)
      if (auto it = blocked_of.find(t); it != blocked_of.end())
        for (const auto& b : it->second)
          if (aliases.inferred.contains(b)) out.insert(b);
}

}  // namespace

FusionMap BuildFusionMap(const GraphView& original, const GraphView& optimized) {
  LayoutAliases aliases = FindLayoutAliases(original, optimized);
  if (aliases.empty()) return MapByNames(original, optimized);
  // Each pass drops the inferred aliases of the regions that do not read what
  // they cover; at worst every inferred alias goes and the layout-converted
  // nodes are one region again, as by names alone.
  for (;;) {
    FusionMap map = MapByNames(original, AliasedView(optimized, aliases));
    std::unordered_map<std::string, std::vector<std::string>> blocked_of;
    for (const auto& [blocked, orig] : aliases.of_blocked) blocked_of[orig].push_back(blocked);
    std::unordered_set<std::string> wrong;
    for (const auto& r : map.regions) {
      bool split_off = false;
      for (const auto& o : r.outputs) split_off = split_off || blocked_of.contains(o);
      if (split_off && !ReadsWhatItCovers(r)) CollectInferred(r, blocked_of, aliases, wrong);
    }
    if (wrong.empty()) {
      for (const auto& [blocked, orig] : aliases.of_blocked)
        if (map.IsSurviving(orig) && !optimized.producer.contains(orig)) map.layout_sources.try_emplace(orig, blocked);
      return map;
    }
    for (const auto& b : wrong) {
      aliases.of_blocked.erase(b);
      aliases.inferred.erase(b);
    }
  }
}

}  // namespace parity
