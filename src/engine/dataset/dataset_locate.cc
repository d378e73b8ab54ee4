// Locate on the worst samples and the top-1 flips of a dataset, and the
// ranking of where they first diverge ("14 of 17 flips first diverge at ...").
#include <algorithm>

#include <fmt/format.h>

#include "engine/dataset/dataset.h"
#include "engine/dataset/dataset_source.h"
#include "engine/dataset/dataset_stats.h"
#include "engine/torch/torch_scope.h"
#include "onnx/graph.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

// The sample of a row, read again from its entry.
Result<Sample> ReadAgain(const ModelInfo& info, const fs::path& entry, const DatasetRow& row, const std::string& label,
                         bool allow_symlinks) {
  PARITY_ASSIGN_OR_RETURN(std::vector<Sample> samples, LoadDatasetEntry(info, entry, label, allow_symlinks));
  for (Sample& s : samples)
    if (s.name == row.sample) return std::move(s);
  return NotFound(fmt::format("{}: sample '{}' is gone", entry.string(), row.sample));
}

// The PyTorch module a located sample first diverges in: the innermost module
// recorded (torch_scope.h) for its original node, else its first divergence's
// producer, else the first covered node that records one, else the first
// consumer of the diverging tensor that does (a quantized weight's
// DequantizeLinear records none; the Conv reading it does); the reference
// model's graph first (its node names), then the target's.
std::string ModuleOf(const DatasetLocated& l, const std::vector<const GraphView*>& graphs) {
  if (!l.first) return "";
  std::vector<std::string> names = {l.node, l.first->producer};
  names.insert(names.end(), l.first->covers.begin(), l.first->covers.end());
  for (const std::string& name : names) {
    if (name.empty()) continue;
    for (const GraphView* g : graphs)
      if (auto i = g->FindNode(name)) {
        const NodeScope scope = ScopeOfNode(g->nodes[*i]);
        if (!scope.Innermost().empty()) return std::string(scope.Innermost());
      }
  }
  for (const GraphView* g : graphs)
    if (auto it = g->consumers.find(l.first->tensor); it != g->consumers.end())
      for (size_t i : it->second)
        if (const NodeScope scope = ScopeOfNode(g->nodes[i]); !scope.Innermost().empty())
          return std::string(scope.Innermost());
  return "";
}

void RankModules(DatasetReport& report) {
  report.module_ranking.clear();
  for (const DatasetLocated& l : report.located) {
    if (l.module.empty()) continue;
    auto it = std::find_if(report.module_ranking.begin(), report.module_ranking.end(),
                           [&](const DatasetModuleRank& e) { return e.module == l.module; });
    if (it == report.module_ranking.end())
      it = report.module_ranking.insert(report.module_ranking.end(), {.module = l.module});
    ++it->samples;
    it->flips += l.flipped;
    it->ids.push_back(l.id);
  }
  std::stable_sort(report.module_ranking.begin(), report.module_ranking.end(),
                   [](const DatasetModuleRank& a, const DatasetModuleRank& b) {
                     return a.flips != b.flips ? a.flips > b.flips : a.samples > b.samples;
                   });
}

void Rank(DatasetReport& report) {
  report.ranking.clear();
  for (const DatasetLocated& l : report.located) {
    if (!l.first) continue;
    auto it = std::find_if(report.ranking.begin(), report.ranking.end(), [&](const DatasetRankEntry& e) {
      return e.fused_node == l.first->fused_node && e.node == l.node;
    });
    if (it == report.ranking.end())
      it = report.ranking.insert(report.ranking.end(), {.fused_node = l.first->fused_node, .op_type = l.first->op_type,
                                                        .node = l.node, .covers = l.first->covers});
    ++it->samples;
    it->flips += l.flipped;
    it->ids.push_back(l.id);
  }
  std::stable_sort(report.ranking.begin(), report.ranking.end(), [](const DatasetRankEntry& a, const DatasetRankEntry& b) {
    return a.flips != b.flips ? a.flips > b.flips : a.samples > b.samples;
  });
}

}  // namespace

void LocateDatasetSamples(const DatasetOptions& o, const Model& model, const ReferenceModel& reference_model,
                          const DatasetReference& reference, const ModelInfo& info, const std::vector<fs::path>& entries, DatasetReport& report) {
  report.located.clear();
  for (const DatasetPick& p : PickSamplesToLocate(report, o.locate_worst, o.locate_flip_cap)) {
    const DatasetRow& row = report.rows[p.row];
    DatasetLocated located{.id = row.id, .worst = p.worst, .flipped = p.flipped};
    auto sample = row.entry < entries.size() ? ReadAgain(info, entries[row.entry], row, o.model_path, o.allow_symlinks)
                                             : Result<Sample>(NotFound("no such entry"));
    if (!sample)
      located.error = sample.error().message();
    else
      reference.Locate(model, reference_model, *sample, o.target, o.policy, o.model_path, located);
    report.located.push_back(std::move(located));
  }
  std::vector<GraphView> views;
  for (const Model* m : reference_model.Models(model))
    if (auto g = BuildGraphView(*m)) views.push_back(std::move(*g));
  std::vector<const GraphView*> graphs;
  for (const GraphView& g : views) graphs.push_back(&g);
  for (DatasetLocated& l : report.located) l.module = ModuleOf(l, graphs);
  Rank(report);
  RankModules(report);
  const int64_t flips_located = std::count_if(report.located.begin(), report.located.end(),
                                              [](const DatasetLocated& l) { return l.flipped; });
  if (report.flips_total > flips_located)
    report.notes.push_back(fmt::format("{} of {} flipped samples were located (at most {}, in stream order)",
                                       flips_located, report.flips_total, o.locate_flip_cap));
}

}  // namespace parity
