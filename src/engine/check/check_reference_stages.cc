// What check's references provide to the stages after the pass
// (check_reference.h): the layer curve's sessions and inputs, locate against
// the ORT reference (one runtime or two, one model or a derived one), the
// numerics steps each reference adds after the target's release.
#include <fmt/format.h>

#include "engine/check/check_internal.h"
#include "engine/locate/locate.h"

namespace parity::check_internal {

std::string CurveSkipReason(const Context& ctx) {
  const ModelInfo& info = ctx.subject.info;
  if (info.node_count > kMaxCurveNodes)
    return fmt::format("the model has {} nodes, more than {}", info.node_count, kMaxCurveNodes);
  if (std::string why = ctx.reference.CurveUnavailable(); !why.empty()) return why;
  const double budget = ctx.options.curve_seconds;
  if (budget <= 0) return "--curve-seconds 0";
  if (!ctx.reference.performance) return "";
  // The curve's sessions: the target's plan saved as it loads (TargetPlanWanted)
  // and the observed reference and target; with a dump the reference's tensors
  // come from the run against PyTorch's layers (ReuseForCurve).
  // Measured on a 268M-parameter model: 5.6 s of a 10.8 s check; 3 x 2.1 s estimated.
  const int sessions = ctx.torch.CurveSessions();
  const PerformanceResult& p = *ctx.reference.performance;
  const double estimate = sessions * (p.session_creation_ms + p.latency.p50_ms) / 1000;
  if (estimate <= budget) return "";
  return fmt::format("its {} sessions of this model are estimated at {:.1f} s from the reference's creation and run, "
                     "over --curve-seconds {:g}",
                     sessions, estimate, budget);
}

// A passing check's curve from what the check already holds (issue 26: each
// session of a 500 MB model costs about a second here): the deployed
// session's plan (made as check loaded it; a failure's ablation needs ORT's
// optimizer log, so locate plans again) with that session's outputs for the
// sample, and, with a PyTorch dump, the reference's tensors of the run
// against PyTorch's layers. With a dump the curve is of the dump's traced
// sample, the one its layers are judged on, for which both are at hand;
// else of `first`, the first non-anomalous sample.
const Sample* ReuseForCurve(Context& ctx, const Sample& first, LocateOptions& options) {
  const bool torch = ctx.target.plan && ctx.torch.curve_sample && ctx.torch.target_outputs;
  const Sample* sample = torch ? &*ctx.torch.curve_sample : &first;
  std::optional<TensorSet>& untouched = torch ? ctx.torch.target_outputs : ctx.target.first_outputs;
  if (ctx.target.plan && untouched) {
    ctx.target.plan->untouched = std::move(untouched);
    options.target_plan = &*ctx.target.plan;
  }
  if (ctx.torch.kept_reference && AllBitwiseEqual(ctx.torch.kept_reference->inputs, sample->tensors))
    options.reference_values = &ctx.torch.kept_reference->values;
  return sample;
}

LocateOptions ReferenceLocateOptions(const Context& ctx) {
  LocateOptions options;
  options.reference = ctx.options.reference.config;
  options.target = ctx.options.target;
  options.policy = ctx.judging.policy;
  options.model_label = ctx.subject.ReferenceLabel();
  options.target_label = ctx.subject.reference.TargetLabel(ctx.subject.label);
  return options;
}

// With --reference-model the reference is that model and MODEL is the
// derived target; otherwise MODEL is both.
Result<LocateReport> ReferenceSide::Locate(const Context& ctx, const Sample& sample,
                                           const LocateOptions& options) const {
  if (ort) return LocateOnTwoRuntimes(ctx.options, ctx.subject.model, ctx.judging.policy, sample);
  return parity::Locate(ctx.subject.ReferenceModel(), ctx.subject.Derived(), sample, options);
}

// A derived model differs from its reference in the model itself, not only
// in a fusion: with every optimization off every tensor survives, so the
// first differing tensor names the original node exactly.
std::optional<CheckFinding> ModelDifference(const Context& ctx, const LocateReport& report, const Sample& sample,
                                            const LocateOptions& options) {
  const Model* derived = ctx.subject.Derived();
  if (derived == nullptr || !report.first_divergence || report.first_divergence->covers.size() <= 1)
    return std::nullopt;
  LocateOptions unfused = options;
  unfused.target = ctx.options.reference.config;
  unfused.ablation = false;
  unfused.precision = false;  // the per-layer report was made by the first run
  auto fine = parity::Locate(ctx.subject.ReferenceModel(), derived, sample, unfused);
  if (!fine || !fine->first_divergence) return std::nullopt;
  const auto& d = *fine->first_divergence;
  return Fail("numerics.locate.model_difference",
              fmt::format("with optimizations off the models first differ at tensor '{}', produced by node '{}' "
                          "({}): the derived model computes this node differently",
                          d.tensor, d.producer, d.op_type));
}

// The tensors two models share belong to a --reference-model; the layers
// against PyTorch to a dump whose traced sample was read.
std::vector<DeferredStep> DeferredNumerics(const Context& ctx) {
  std::vector<DeferredStep> steps;
  if (ctx.subject.reference.ModelsDiffer()) steps.push_back(CheckSharedTensors);
  if (ctx.flags.torch_outputs_read) steps.push_back(CheckTorchLayers);
  return steps;
}

}  // namespace parity::check_internal
