// What `parity view` (python/parity/view.py) needs beside the overlays to
// open the original and ORT's optimized graph side by side (issue 53 item 3,
// docs/model-explorer.md "parity view"):
//   - sync_navigation.json: Model Explorer's sync-navigation mapping between
//     the two panes, {"mappingEntries": [{"leftNodeIds": [...],
//     "rightNodeIds": [...]}]}: each fused node (right, ORT's optimized graph)
//     with the original nodes it covers (left, by the ONNX adapter's ids);
//     a node ORT kept as it was needs no entry (Model Explorer falls back to
//     the same id);
//   - view.json: the model, the optimized graph, which overlay belongs to
//     which graph, and the first divergent node on each side (where the view
//     opens), {"model", "optimized", "original_node_data": [...],
//     "optimized_node_data": [...], "first_divergence": {"original",
//     "optimized"} | null, "sync_navigation"}.
// Pure: renders text, touches no file.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/locate/locate_result.h"

namespace parity {

struct ModelExplorerFile;

// "" when the report has no fused node. `ids`: parity's original node names
// to the adapter's ids (ModelExplorerNodeIds); null keeps the names.
std::string SyncNavigationJson(const LocateReport& r, const std::unordered_map<std::string, std::string>* ids);

// view.json for `files` (RenderModelExplorerFiles' list, sync_navigation.json
// included when written). `model`: MODEL's absolute path.
std::string ModelExplorerViewJson(const std::vector<ModelExplorerFile>& files, const std::string& model,
                                  const LocateReport* r, const std::unordered_map<std::string, std::string>* ids);

}  // namespace parity
