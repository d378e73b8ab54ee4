// check's locate step: the per-layer error curve of a passing check, and for
// a failing one the fused node that departs first, its culprit and, for a
// derived model, the node where the two models first differ.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/check/check_internal.h"
#include "engine/inputs/sample_gen.h"
#include "engine/locate/locate.h"
#include "onnx/graph.h"

namespace parity::check_internal {
namespace {

// "a, b, c" or, for long lists, "a, b, c, ... (34 nodes) ..., y, z".
std::string NodeList(const std::vector<std::string>& nodes) {
  if (nodes.size() <= 8) return fmt::format("{}", fmt::join(nodes, ", "));
  return fmt::format("{}, {}, {}, ... ({} nodes) ..., {}, {}", nodes[0], nodes[1], nodes[2], nodes.size(),
                     nodes[nodes.size() - 2], nodes.back());
}

// The first sample whose numerics failed, else the first non-anomalous one.
const Sample* SampleToLocate(const Context& ctx, const std::vector<SampleResult>& judged, bool* failed) {
  *failed = false;
  for (const auto& result : judged) {
    if (result.status != Verdict::kFail || !result.error.empty() || result.timed_out ||
        result.kind == SampleKindName(SampleKind::kAnomaly))
      continue;
    for (const auto& s : ctx.subject.samples)
      if (s.name == result.name) {
        *failed = true;
        return &s;
      }
  }
  return FirstOrdinarySample(ctx);
}

// A passing check does not trace every tensor of a large graph for the
// curve alone: observing N tensors costs ORT far more than a plain run
// (issue 29, probe 5: a 100k-node chain), nor load a big model twice more
// past its budget (CurveSkipReason). A failing one still localizes.
bool SkipCurve(const std::string& curve_skipped, std::vector<std::string>& notes) {
  if (curve_skipped.empty()) return false;
  notes.push_back(fmt::format(
      "layer_curve not computed: {}; the outputs passed (run `parity locate` for the per-layer error)",
      curve_skipped));
  return true;
}

// numerics.locate.top_culprit: the culprit, what it was narrowed from, and its
// cause: the optimizer whose switching off removes it, or the ablation's note
// (a model difference names no optimizer).
CheckFinding TopCulpritFinding(const LocateCulprit& c) {
  // A drill-down's last step (docs/locate.md 4b): say what it was narrowed from.
  const std::string narrowed =
      c.narrowing ? fmt::format(" (narrowed from a fused region of {} nodes in {} steps{})",
                                c.narrowing->steps.front().covers.size(), c.narrowing->steps.size() - 1,
                                c.narrowing->note.empty() ? "" : "; " + c.narrowing->note)
                  : "";
  const std::string cause =
      !c.ablation                     ? ""
      : !c.ablation->optimizer.empty() ? fmt::format("; switching off {} removes it", c.ablation->optimizer)
      : c.ablation->note.empty()       ? ""
                                       : "; " + c.ablation->note;
  return Fail("numerics.locate.top_culprit",
           fmt::format("top culprit: {} ({}) covering [{}]{}: local error {:.3g} (score {:.3g}), inherited {:.3g}{}",
                       c.fused_node, c.op_type, NodeList(c.covers), narrowed, c.local.max_abs, c.local.score,
                       c.inherited.max_abs, cause));
}

// The per-layer error curve of check's report, from locate's tensor table.
void AddLayerCurve(const Model& graph_model, const LocateReport& report, std::vector<LayerErrorPoint>& curve) {
  auto graph = BuildGraphView(graph_model, {.infer_shapes = false});
  for (const auto& t : report.tensors) {
    const GraphNode* node = graph ? graph->Producer(t.name) : nullptr;
    LayerErrorPoint p{.index = static_cast<int64_t>(t.index), .tensor = t.name, .producer = t.producer,
                      .op_type = node ? node->op_type : "", .status = t.status};
    if (t.metrics) {
      p.max_abs = t.metrics->max_abs;
      p.error_ratio = t.score;
    }
    curve.push_back(std::move(p));
  }
}

}  // namespace

// Runs locate on one sample: the per-layer error curve always, and, when a
// sample failed, the fused node that departs first.
Localized Localize(Context& ctx, const std::vector<SampleResult>& judged) {
  Localized out;
  bool failed = false;
  const Sample* sample = SampleToLocate(ctx, judged, &failed);
  if (sample == nullptr || !ctx.flags.sessions_loaded) return out;
  if (failed ? !ctx.options.locate_on_failure : SkipCurve(ctx.flags.curve_skipped, out.notes)) return out;
  if (ctx.options.progress) ctx.options.progress("locate", 0, 1);
  LocateOptions options = ReferenceLocateOptions(ctx);
  options.ablation = failed;
  // A passing check's curve keeps the exposed observation where exposing
  // changes ORT's plan (said in a note); a failing one observes the deployed plan.
  options.observe.fallback = failed;
  if (!failed) sample = ReuseForCurve(ctx, *sample, options);
  auto report = ctx.reference.Locate(ctx, *sample, options);
  std::vector<CheckFinding>& numerics = out.numerics;
  if (!report) {
    if (failed) numerics.push_back(Skip("numerics.locate", "locate could not run: " + report.error().message()));
    return out;
  }
  AddLayerCurve(ctx.subject.ReferenceModel(), *report, out.layer_curve);
  out.quant = report->quant;
  if (!failed && !report->observer_check)
    out.notes.push_back(fmt::format(
        "layer_curve: exposing the surviving tensors changed what ORT runs ({}), so the curve is of that exposed "
        "plan, not exactly the deployed one (`parity locate` observes the deployed plan through ORT's saved "
        "optimized model)",
        report->observer_notes.empty() ? "its fusions, or the outputs' bits"
                                       : fmt::format("{}", fmt::join(report->observer_notes, "; "))));
  if (!failed) return out;
  out.locate = *report;
  if (report->first_divergence) {
    const auto& d = *report->first_divergence;
    numerics.push_back(
        Fail("numerics.locate.first_divergence",
             fmt::format("sample '{}': first divergence at tensor '{}', produced by '{}' ({}), fused node '{}' "
                         "covering [{}]",
                         sample->name, d.tensor, d.producer, d.op_type, d.fused_node, NodeList(d.covers))));
  }
  if (auto difference = ModelDifference(ctx, *report, *sample, options)) numerics.push_back(*difference);
  // A culprit without any error is no failed test (locate drops such ones).
  if (!report->culprits.empty() && report->culprits.front().HasError())
    numerics.push_back(TopCulpritFinding(report->culprits.front()));
  return out;
}

}  // namespace parity::check_internal
