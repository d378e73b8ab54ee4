#include "report/overlays/model_explorer.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "core/shell_word.h"
#include "report/overlays/model_explorer_internal.h"
#include "report/overlays/model_explorer_view.h"

namespace parity {
namespace {

using model_explorer_internal::Overlay;
using model_explorer_internal::Scale;
using nlohmann::ordered_json;

ordered_json Threshold(double value, const char* color) { return {{"value", value}, {"bgColor", color}}; }

// Model Explorer colours a number by the first threshold it is at most
// (thresholds ascending); text carries its colour per node.
void AddColours(const Overlay& o, ordered_json& j) {
  using namespace model_explorer_internal;
  const double cap = kModelExplorerScoreCap;
  switch (o.scale) {
    case Scale::kScore:
      j["thresholds"] = {Threshold(0.5, kPassColor), Threshold(1, kNearColor), Threshold(cap, kFailColor)};
      break;
    case Scale::kSqnr:
      j["thresholds"] = {Threshold(10, kFailColor), Threshold(20, kNearColor), Threshold(cap, kPassColor)};
      break;
    case Scale::kSteps:
      j["thresholds"] = {Threshold(1, kPassColor), Threshold(2, kNearColor), Threshold(cap, kFailColor)};
      break;
    case Scale::kCount: {
      // Thirds of the largest count. Not a gradient: Model Explorer colours
      // nothing when every value is the same (its stop is then 0/0).
      double most = 0;
      for (const auto& v : o.values) most = std::max(most, v.number);
      j["thresholds"] = {Threshold(most / 3, "#ffcdd2"), Threshold(2 * most / 3, "#ef9a9a"),
                         Threshold(most, "#e53935")};
      break;
    }
    case Scale::kText:
      break;
  }
}

std::string OverlayJson(const Overlay& o) {
  ordered_json j;
  j["name"] = o.title;
  ordered_json results = ordered_json::object();
  for (const auto& v : o.values) {
    ordered_json r;
    if (o.scale == Scale::kText) {
      r["value"] = v.text;
      if (!v.color.empty()) r["bgColor"] = v.color;
    } else {
      r["value"] = v.number;
    }
    results[v.id] = std::move(r);
  }
  j["results"] = std::move(results);
  AddColours(o, j);
  return ToJsonText(j, 1) + "\n";
}

std::string Readme(const std::vector<Overlay>& overlays, const std::vector<ModelExplorerFile>& files,
                   const std::filesystem::path& dir, const std::string& model) {
  std::string text = fmt::format(
      "# Model Explorer overlays written by parity\n\n"
      "Per-node findings of parity as node data for Google's Model Explorer "
      "(`pip install ai-edge-model-explorer model-explorer-onnx`; docs/model-explorer.md).\n"
      "Errors are in tolerance units: at most 0.5 green (pass), up to 1 yellow (near), over 1 red (fail); "
      "{:g} stands for NaN or an infinite error.\n\n"
      "The original graph:\n\n    {}\n",
      kModelExplorerScoreCap, ModelExplorerCommand(files, dir, model, false));
  for (const auto& f : files)
    if (f.optimized_graph) {
      text += fmt::format("\nORT's optimized graph (`{}`, structure only: for viewing, not for running):\n\n    {}\n",
                          kOptimizedGraphName, ModelExplorerCommand(files, dir, model, true));
      break;
    }
  text += "\n| file | graph | shows |\n| --- | --- | --- |\n";
  for (const auto& o : overlays)
    text += fmt::format("| `{}` | {} | {} ({} nodes) |\n", o.file, o.optimized_graph ? "optimized" : "original",
                        o.title, o.values.size());
  return text;
}

}  // namespace

// The name a node had in the file: parity names an unnamed node
// "<op>_<index>" and the later nodes of a repeated name "<name>_<k>"
// (onnx/graph.h NodeNames); "" for an unnamed one.
std::string FileName(const GraphNode& n) {
  if (!n.name_synthesized) return n.name;
  if (n.name.starts_with(fmt::format("{}_{}", n.op_type, n.file_index))) return "";
  return n.name.substr(0, n.name.rfind('_'));
}

std::unordered_map<std::string, std::string> ModelExplorerNodeIds(const GraphView& graph) {
  // The adapter names nodes as onnx_ir's NameFixPass leaves them: in file
  // order, an unnamed node takes "node", a name already taken its next free
  // "<name>_<k>" (one counter per preferred name).
  std::vector<const GraphNode*> file_order;
  for (const auto& n : graph.nodes) file_order.push_back(&n);
  std::sort(file_order.begin(), file_order.end(),
            [](const GraphNode* a, const GraphNode* b) { return a->file_index < b->file_index; });
  std::unordered_set<std::string> used;
  std::unordered_map<std::string, int> counter;
  std::unordered_map<std::string, std::string> ids;
  for (const GraphNode* n : file_order) {
    const std::string name = FileName(*n);
    std::string id = name.empty() ? "node" : name;
    if (name.empty() || used.contains(id)) {
      const std::string preferred = id;
      while (used.contains(id)) id = fmt::format("{}_{}", preferred, ++counter[preferred]);
    }
    used.insert(id);
    ids.emplace(n->name, std::move(id));
  }
  return ids;
}

bool IsNodeDataFile(std::string_view name) {
  return name.ends_with(".json") && name != "sync_navigation.json" && name != "view.json";
}

std::string ModelExplorerCommand(const std::vector<ModelExplorerFile>& files, const std::filesystem::path& dir,
                                 const std::string& model, bool optimized_graph) {
  std::string paths;
  for (const auto& f : files)
    if (f.optimized_graph == optimized_graph && IsNodeDataFile(f.name)) {
      if (!paths.empty()) paths += ',';
      paths += (dir / f.name).string();
    }
  const std::string graph = optimized_graph ? (dir / kOptimizedGraphName).string() : model;
  return fmt::format("model-explorer {} --extensions=model_explorer_onnx --node_data_paths={}", ShellWord(graph),
                     ShellWord(paths));
}

std::vector<ModelExplorerFile> RenderModelExplorerFiles(const ModelExplorerInput& in,
                                                        const std::filesystem::path& dir) {
  const auto overlays = model_explorer_internal::CollectOverlays(in);
  std::vector<ModelExplorerFile> files;
  files.push_back({.name = "README.md"});
  if (in.locate && !in.locate->optimized_graph.empty())
    files.push_back({.name = kOptimizedGraphName, .text = in.locate->optimized_graph, .optimized_graph = true});
  for (const auto& o : overlays)
    files.push_back({.name = o.file, .text = OverlayJson(o), .optimized_graph = o.optimized_graph});
  files.front().text = Readme(overlays, files, std::filesystem::absolute(dir), in.model);
  // What `parity view` opens (model_explorer_view.h).
  std::unordered_map<std::string, std::string> ids;
  if (in.graph) ids = ModelExplorerNodeIds(*in.graph);
  const auto* id_map = in.graph ? &ids : nullptr;
  if (in.locate)
    if (std::string sync = SyncNavigationJson(*in.locate, id_map); !sync.empty())
      files.push_back({.name = "sync_navigation.json", .text = std::move(sync)});
  const std::string model = in.model.empty() ? "" : std::filesystem::absolute(in.model).string();
  files.push_back({.name = "view.json", .text = ModelExplorerViewJson(files, model, in.locate, id_map)});
  return files;
}

Status CheckModelExplorerDir(const std::filesystem::path& dir) {
  return WithContext(CheckReplaceableOutputDir(dir, kModelExplorerKind, kModelExplorerFiles), "--model-explorer");
}

Status WriteModelExplorerFiles(const std::filesystem::path& dir, const std::vector<ModelExplorerFile>& files) {
  auto staged = StageOutputDir(dir, kModelExplorerKind, kModelExplorerFiles);
  if (!staged) return std::unexpected(staged.error().With("--model-explorer"));
  for (const auto& f : files)
    if (auto s = WriteFileAtomic(staged->path() / f.name, f.text, Sync::kByFolder); !s)
      return std::unexpected(s.error().With("writing " + (dir / f.name).string()));
  if (auto s = staged->Commit(/*replace=*/true); !s) return std::unexpected(s.error().With("--model-explorer"));
  return {};
}

}  // namespace parity
