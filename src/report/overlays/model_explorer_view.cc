#include "report/overlays/model_explorer_view.h"

#include <nlohmann/json.hpp>

#include "core/json_out.h"
#include "report/overlays/model_explorer.h"

namespace parity {

namespace {

using ordered_json = nlohmann::ordered_json;
using Ids = std::unordered_map<std::string, std::string>;

std::string IdOf(const std::string& name, const Ids* ids) {
  if (ids == nullptr) return name;
  auto it = ids->find(name);
  return it == ids->end() ? name : it->second;
}

}  // namespace

std::string SyncNavigationJson(const LocateReport& r, const Ids* ids) {
  if (r.fused_nodes.empty() || r.optimized_graph.empty()) return "";
  ordered_json entries = ordered_json::array();
  for (const auto& f : r.fused_nodes) {
    ordered_json left = ordered_json::array(), right = ordered_json::array();
    for (const auto& c : f.covers) left.push_back(IdOf(c, ids));
    for (const auto& n : f.nodes) right.push_back(n);
    entries.push_back(ordered_json{{"leftNodeIds", std::move(left)}, {"rightNodeIds", std::move(right)}});
  }
  return ToJsonText(ordered_json{{"mappingEntries", std::move(entries)}}, 1) + "\n";
}

std::string ModelExplorerViewJson(const std::vector<ModelExplorerFile>& files, const std::string& model,
                                  const LocateReport* r, const Ids* ids) {
  ordered_json j;
  j["model"] = model;
  ordered_json original = ordered_json::array(), optimized = ordered_json::array();
  bool has_optimized = false, has_sync = false;
  for (const auto& f : files) {
    if (f.name == kOptimizedGraphName) has_optimized = true;
    if (f.name == "sync_navigation.json") has_sync = true;
    if (!f.name.ends_with(".json") || f.name == "sync_navigation.json" || f.name == "view.json") continue;
    (f.optimized_graph ? optimized : original).push_back(f.name);
  }
  j["optimized"] = has_optimized ? ordered_json(kOptimizedGraphName) : ordered_json(nullptr);
  j["original_node_data"] = std::move(original);
  j["optimized_node_data"] = std::move(optimized);
  if (r != nullptr && r->first_divergence) {
    const auto& d = *r->first_divergence;
    j["first_divergence"] = ordered_json{{"original", d.producer.empty() ? "" : IdOf(d.producer, ids)},
                                         {"optimized", has_optimized ? d.fused_node : ""}};
  } else {
    j["first_divergence"] = nullptr;
  }
  j["sync_navigation"] = has_sync ? ordered_json("sync_navigation.json") : ordered_json(nullptr);
  return ToJsonText(j, 1) + "\n";
}

}  // namespace parity
