// The overlays' values, gathered from the engine's reports: per node of the
// original graph (locate's tensors and culprits, check's error curve, the
// PyTorch alignment, the per-layer precision of a derived model, a dataset's
// ranking) and per node of ORT's optimized graph (locate's fused nodes).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compare/judge.h"
#include "report/overlays/model_explorer_internal.h"

namespace parity::model_explorer_internal {
namespace {

using Ids = std::unordered_map<std::string, std::string>;

// JSON has no infinity: NaN and anything beyond the cap are the cap (a failure).
double Capped(double v) {
  if (std::isnan(v) || v > kModelExplorerScoreCap) return kModelExplorerScoreCap;
  return std::max(v, -kModelExplorerScoreCap);
}

// One overlay being filled: node names mapped to the adapter's ids, one
// value per id in first-seen order.
class Builder {
 public:
  Builder(const Ids* ids, std::string file, std::string title, Scale scale, bool optimized = false)
      : ids_(ids) {
    overlay_ = {.file = std::move(file), .title = std::move(title), .scale = scale, .optimized_graph = optimized};
  }
  // The largest value wins (the worst error of a node's outputs).
  void Max(const std::string& node, double v) {
    bool fresh = false;
    if (auto* slot = Slot(node, &fresh)) slot->number = fresh ? Capped(v) : std::max(slot->number, Capped(v));
  }
  // The last value wins (a narrower region's measurement).
  void Set(const std::string& node, double v) {
    bool fresh = false;
    if (auto* slot = Slot(node, &fresh)) slot->number = Capped(v);
  }
  // A text; a higher `rank` replaces a lower one (fail over pass over unchecked).
  void Text(const std::string& node, const std::string& text, const std::string& color = "", int rank = 0) {
    bool fresh = false;
    auto* slot = Slot(node, &fresh);
    if (!slot || (!fresh && ranks_[slot->id] >= rank)) return;
    slot->text = text;
    slot->color = color;
    ranks_[slot->id] = rank;
  }
  Overlay Take() && { return std::move(overlay_); }

 private:
  OverlayValue* Slot(const std::string& node, bool* fresh) {
    if (node.empty()) return nullptr;
    std::string id = node;
    if (ids_) {
      auto it = ids_->find(node);
      if (it == ids_->end()) return nullptr;  // a node the adapter cannot name apart
      id = it->second;
    }
    auto [it, inserted] = index_.emplace(id, overlay_.values.size());
    if (inserted) overlay_.values.push_back({.id = id});
    *fresh = inserted;
    return &overlay_.values[it->second];
  }
  const Ids* ids_;
  Overlay overlay_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<std::string, int> ranks_;
};

int Rank(Verdict v) { return v == Verdict::kFail ? 2 : v == Verdict::kPass ? 1 : 0; }
const char* Color(Verdict v) {
  return v == Verdict::kFail ? kFailColor : v == Verdict::kPass ? kPassColor : kUncheckedColor;
}

void Push(std::vector<Overlay>& out, Builder&& b) {
  Overlay o = std::move(b).Take();
  if (!o.values.empty()) out.push_back(std::move(o));
}

// Each node's local error: that of the smallest measured range covering it.
// A drill-down's larger ranges hold the culprit it narrowed to: their error
// is the culprit's, so the nodes they alone add get none of it.
void LocalErrors(const LocateCulprit& c, Builder& local) {
  const std::unordered_set<std::string> culprit(c.covers.begin(), c.covers.end());
  if (c.narrowing)
    for (const auto& step : c.narrowing->steps) {
      if (!step.measured || step.local.tensor.empty()) continue;
      const std::unordered_set<std::string> range(step.covers.begin(), step.covers.end());
      const bool holds_culprit = range.size() > culprit.size() &&
                                 std::all_of(c.covers.begin(), c.covers.end(),
                                             [&](const auto& n) { return range.contains(n); });
      for (const auto& n : step.covers)
        if (!holds_culprit || culprit.contains(n)) local.Set(n, step.local.score);
    }
  if (!c.local.tensor.empty())
    for (const auto& n : c.covers) local.Set(n, c.local.score);
}

// The original graph: error, status, local error, fused node (locate; else check's curve).
void OriginalOverlays(const ModelExplorerInput& in, const Ids* ids, std::vector<Overlay>& out) {
  Builder error(ids, "original_error.json", "parity: error / tolerance", Scale::kScore);
  Builder local(ids, "original_local.json", "parity: local error / tolerance (fed reference inputs)", Scale::kScore);
  Builder status(ids, "original_status.json", "parity: pass / fail / unchecked", Scale::kText);
  Builder fused(ids, "original_fused.json", "parity: ORT's fused node covering it", Scale::kText);
  if (in.locate) {
    for (const auto& t : in.locate->tensors) {
      if (t.status != Verdict::kUnchecked) error.Max(t.producer, t.score);
      status.Text(t.producer, std::string(VerdictName(t.status)), Color(t.status), Rank(t.status));
    }
    for (const auto& c : in.locate->culprits) LocalErrors(c, local);
    for (const auto& f : in.locate->fused_nodes)
      for (const auto& n : f.covers) fused.Text(n, fmt::format("{} ({})", f.name, f.op_type));
  } else if (in.layer_curve) {
    for (const auto& p : *in.layer_curve) {
      if (p.status != Verdict::kUnchecked) error.Max(p.producer, p.error_ratio);
      status.Text(p.producer, std::string(VerdictName(p.status)), Color(p.status), Rank(p.status));
    }
  }
  Push(out, std::move(error));
  Push(out, std::move(local));
  Push(out, std::move(status));
  Builder module(ids, "original_module.json", "parity: PyTorch module", Scale::kText);
  if (in.torch)
    for (const auto& l : in.torch->layers) module.Text(l.alignment.node, l.alignment.module);
  if (in.quant)
    for (const auto& l : in.quant->layers)
      if (!l.module.empty()) module.Text(l.node, l.module);
  if (in.dataset)
    for (const auto& l : in.dataset->located)
      if (!l.module.empty()) module.Text(!l.node.empty() ? l.node : l.first ? l.first->producer : std::string(), l.module);
  Push(out, std::move(module));
  Push(out, std::move(fused));
}

void TorchOverlays(const TorchComparison& torch, const Ids* ids, std::vector<Overlay>& out) {
  Builder error(ids, "original_torch_error.json", "parity: error / tolerance against PyTorch", Scale::kScore);
  Builder status(ids, "original_torch_status.json", "parity: against PyTorch", Scale::kText);
  for (const auto& l : torch.layers) {
    const std::string& node = l.alignment.node;
    if (l.status != Verdict::kUnchecked) error.Max(node, l.score);
    status.Text(node, fmt::format("{} ({})", VerdictName(l.status), l.alignment.module), Color(l.status),
                Rank(l.status));
  }
  Push(out, std::move(error));
  Push(out, std::move(status));
}

void QuantOverlays(const QuantReport& quant, const Ids* ids, std::vector<Overlay>& out) {
  Builder sqnr(ids, "quant_sqnr.json", "parity: SQNR dB (end to end)", Scale::kSqnr);
  Builder local(ids, "quant_local_sqnr.json", "parity: local SQNR dB (fed float inputs)", Scale::kSqnr);
  Builder steps(ids, "quant_local_steps.json", "parity: local error in quantization steps", Scale::kSteps);
  for (const auto& l : quant.layers) {
    if (l.cumulative.measured) sqnr.Set(l.node, l.cumulative.sqnr_db);
    if (l.local.measured) {
      local.Set(l.node, l.local.sqnr_db);
      if (l.step > 0) steps.Set(l.node, l.local.max_steps);
    }
  }
  Push(out, std::move(sqnr));
  Push(out, std::move(local));
  Push(out, std::move(steps));
}

void DatasetOverlays(const DatasetReport& d, const Ids* ids, std::vector<Overlay>& out) {
  Builder first(ids, "dataset_first_divergence.json", "parity: located samples first diverging here", Scale::kCount);
  Builder flips(ids, "dataset_flips.json", "parity: top-1 flips first diverging here", Scale::kCount);
  for (const auto& r : d.ranking) {
    // The original node where known, else every node the fused node covers.
    std::vector<std::string> nodes = r.node.empty() ? r.covers : std::vector<std::string>{r.node};
    for (const auto& n : nodes) {
      first.Max(n, static_cast<double>(r.samples));
      if (r.flips > 0) flips.Max(n, static_cast<double>(r.flips));
    }
  }
  Push(out, std::move(first));
  Push(out, std::move(flips));
}

// ORT's optimized graph: each optimized node's output error, a fused
// region's local error on all its nodes, and what each fused node covers.
void OptimizedOverlays(const LocateReport& r, const Ids* ids, std::vector<Overlay>& out) {
  Builder error(nullptr, "optimized_error.json", "parity: error / tolerance of its outputs", Scale::kScore, true);
  Builder local(nullptr, "optimized_local.json", "parity: local error / tolerance (fed reference inputs)",
                Scale::kScore, true);
  Builder covers(nullptr, "optimized_covers.json", "parity: original nodes it covers", Scale::kText, true);
  for (const auto& t : r.tensors)
    if (t.status != Verdict::kUnchecked) error.Max(t.fused_node, t.score);
  for (const auto& c : r.culprits) {
    // A narrowed culprit is a group planned alone, not a node of this graph:
    // the region it was narrowed from carries the region's own local error.
    const ErrorSummary& e = c.narrowing && !c.narrowing->steps.empty() ? c.narrowing->steps.front().local : c.local;
    if (e.tensor.empty()) continue;
    const std::unordered_set<std::string> covered(c.covers.begin(), c.covers.end());
    bool found = false;
    for (const auto& f : r.fused_nodes)
      if (std::any_of(f.covers.begin(), f.covers.end(), [&](const auto& n) { return covered.contains(n); })) {
        for (const auto& n : f.nodes) local.Max(n, e.score);
        found = true;
      }
    if (!found && !c.fused) local.Max(c.fused_node, e.score);
  }
  for (const auto& f : r.fused_nodes) {
    std::string text = fmt::format("{} node{}: ", f.covers.size(), f.covers.size() == 1 ? "" : "s");
    for (size_t i = 0; i < f.covers.size() && i < 12; ++i) {
      // The original nodes as Model Explorer names them in MODEL's graph.
      auto it = ids ? ids->find(f.covers[i]) : Ids::const_iterator{};
      if (i) text += ", ";
      text += ids && it != ids->end() ? it->second : f.covers[i];
    }
    if (f.covers.size() > 12) text += ", ...";
    for (const auto& n : f.nodes) covers.Text(n, text);
  }
  Push(out, std::move(error));
  Push(out, std::move(local));
  Push(out, std::move(covers));
}

}  // namespace

std::vector<Overlay> CollectOverlays(const ModelExplorerInput& in) {
  std::optional<Ids> ids;
  if (in.graph) ids = ModelExplorerNodeIds(*in.graph);
  const Ids* map = ids ? &*ids : nullptr;
  std::vector<Overlay> out;
  OriginalOverlays(in, map, out);
  if (in.torch) TorchOverlays(*in.torch, map, out);
  const QuantReport* quant = in.quant ? in.quant : in.locate && in.locate->quant ? &*in.locate->quant : nullptr;
  if (quant) QuantOverlays(*quant, map, out);
  if (in.dataset) DatasetOverlays(*in.dataset, map, out);
  if (in.locate && !in.locate->optimized_graph.empty()) OptimizedOverlays(*in.locate, map, out);
  return out;
}

}  // namespace parity::model_explorer_internal
