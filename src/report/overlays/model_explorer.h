// Model Explorer node data (issue 45, docs/model-explorer.md): parity's
// per-node findings as overlays on the graph in Google's Model Explorer
// (`pip install ai-edge-model-explorer model-explorer-onnx`).
//
// Each overlay is one node-data file in Model Explorer's single-graph form
// (model_explorer.node_data_builder.GraphNodeData): {"name", "results":
// {NODE_ID: {"value", "bgColor"?}}, "thresholds"}. NODE_ID is
// the id Model Explorer's ONNX adapter (model-explorer-onnx) gives a node:
// its name, or "node", "node_1", ... for unnamed nodes in file order. The
// overlays of the original graph are opened on MODEL, those of ORT's
// optimized graph on `optimized.onnx`, written beside them (structure only:
// for viewing, not running). README.md in the folder gives the commands.
//
// Numbers are in tolerance units (score: max_abs / (atol + rtol*max|ref|),
// compare/judge.h): at most 0.5 is "pass", up to 1 "near", over 1 "fail";
// NaN and infinite scores are written as kModelExplorerScoreCap (JSON has no
// infinity), which the thresholds colour as a failure. Node names are text
// of the model: they are escaped by the one JSON serializer
// (core/json_out.h), invalid UTF-8 replaced, so every file is valid JSON.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "engine/check/check_result.h"
#include "engine/dataset/dataset_result.h"
#include "engine/locate/locate_result.h"
#include "engine/torch/torch_compare.h"
#include "onnx/graph.h"

namespace parity {

inline constexpr double kModelExplorerScoreCap = 1e6;
// The output-folder marker's kind (core/output_dir.h).
inline constexpr std::string_view kModelExplorerKind = "parity.model_explorer";
inline constexpr const char* kOptimizedGraphName = "optimized.onnx";
// Every file the folder may hold besides the marker (written when it has data).
inline constexpr std::string_view kModelExplorerFiles[] = {
    "README.md",
    "original_error.json",
    "original_local.json",
    "original_status.json",
    "original_module.json",
    "original_fused.json",
    "original_torch_error.json",
    "original_torch_status.json",
    "quant_sqnr.json",
    "quant_local_sqnr.json",
    "quant_local_steps.json",
    "dataset_first_divergence.json",
    "dataset_flips.json",
    kOptimizedGraphName,
    "optimized_error.json",
    "optimized_local.json",
    "optimized_covers.json",
    "sync_navigation.json",  // not node data: the two panes' mapping (model_explorer_view.h)
    "view.json",             // not node data: what `parity view` opens
};

// What the overlays are made of; every pointer may be null (that source is
// absent). The reports must outlive the call.
struct ModelExplorerInput {
  std::string model;                 // MODEL, the original graph (the README's command)
  const GraphView* graph = nullptr;  // MODEL's graph: parity's node names to the adapter's ids
  const LocateReport* locate = nullptr;
  const std::vector<LayerErrorPoint>* layer_curve = nullptr;  // check's curve, used without `locate`
  const TorchComparison* torch = nullptr;
  const QuantReport* quant = nullptr;
  const DatasetReport* dataset = nullptr;
};

struct ModelExplorerFile {
  std::string name;  // one of kModelExplorerFiles
  std::string text;
  bool optimized_graph = false;  // an overlay of optimized.onnx (not of MODEL)
};

// parity's node names (GraphView: synthesized for unnamed and repeated
// nodes) to the adapter's ids, as onnx_ir's NameFixPass (which the adapter
// runs first) names them in file order: a named node keeps its name, an
// unnamed one is "node", "node_1", ..., a repeated name's later nodes
// "<name>_1", ... (each the next name not yet taken).
std::unordered_map<std::string, std::string> ModelExplorerNodeIds(const GraphView& graph);

// Every overlay `in` has data for, README.md first, optimized.onnx when the
// locate report holds ORT's optimized graph. Pure: touches no file.
std::vector<ModelExplorerFile> RenderModelExplorerFiles(const ModelExplorerInput& in,
                                                        const std::filesystem::path& dir);

// Whether a file of the folder is node data (not README.md, optimized.onnx,
// sync_navigation.json or view.json).
bool IsNodeDataFile(std::string_view name);

// The command that opens `files`' overlays of one graph (optimized or not)
// from `dir`: "model-explorer GRAPH --node_data_paths=DIR/a.json,DIR/b.json".
std::string ModelExplorerCommand(const std::vector<ModelExplorerFile>& files, const std::filesystem::path& dir,
                                 const std::string& model, bool optimized_graph);

// Whether `dir` may receive the overlays: new, empty, or an earlier
// --model-explorer folder holding only its own files (core/output_dir.h).
// Touches nothing; the commands call it before they run.
Status CheckModelExplorerDir(const std::filesystem::path& dir);

// Writes `files` (RenderModelExplorerFiles) with the marker into a staging
// folder beside `dir` and puts it in place whole (core/staged_dir.h), as the
// check report is written: an error or an interrupt leaves `dir` as it was.
// Errors: kInvalidArgument naming the folder refused or the file that could
// not be written.
Status WriteModelExplorerFiles(const std::filesystem::path& dir, const std::vector<ModelExplorerFile>& files);

}  // namespace parity
