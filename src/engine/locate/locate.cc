#include "engine/locate/locate.h"

#include <chrono>

#include "engine/locate/locate_internal.h"
#include "engine/locate/locate_steps.h"
#include "engine/locate/step_chain.h"
#include "engine/quant/layer_match.h"
#include "engine/quant/cast.h"
#include "engine/quant/quant_layers.h"
#include "engine/quant/quant_steps.h"
#include "onnx/control_flow.h"

namespace parity {

namespace {

using locate_internal::Context;
using locate_internal::LocatePlan;
using locate_internal::MainNodeName;
using locate_internal::NamedModels;
using locate_internal::Traced;

// The first failing tensor, in the reference's topological order.
std::optional<FirstDivergence> FindFirstDivergence(const LocateReport& report, const FusionMap& map) {
  for (const auto& t : report.tensors) {
    if (t.status != Verdict::kFail) continue;
    const FusedRegion* r = map.RegionOf(t.name);
    FirstDivergence d{.tensor = t.name, .producer = t.producer};
    if (r) {
      d.fused_node = MainNodeName(*r);
      d.op_type = r->OpSummary();
      d.covers = r->covers;
    }
    return d;
  }
  return std::nullopt;
}

// A first step or failure at a fused node covering several kernels (the
// NhwcTransformer chain of QLinearConvs): narrowed to the kernel where it
// first appears, each kernel run alone (step_chain.h).
Status NarrowStepChains(const NamedModels& m, const FusionMap& map, const TensorSet& values, const Sample& sample,
                        const LocateOptions& o, LocateReport& report) {
  QuantDeployed& d = *report.quant->deployed;
  const StepChainInputs in{.reference_model = m.reference(), .target_model = m.target(),
                           .target_view = m.target_view(), .reference_values = values, .sample = sample,
                           .reference = o.reference, .target = o.target, .label = m.target_label};
  for (auto [entry, above] : {std::pair{&d.first_failure, 1.0}, std::pair{&d.first_rounding, 0.0}}) {
    if (!*entry) continue;
    const FusedRegion* r = map.RegionOf((*entry)->tensor);
    if (r == nullptr) continue;
    size_t kernels = 0;
    for (const auto& name : r->covers)
      if (auto at = m.target_view().FindNode(name)) kernels += IsComputeOp(m.target_view().nodes[*at].op_type);
    if (kernels < 2) continue;
    int sessions = 0;
    PARITY_ASSIGN_OR_RETURN((*entry)->chain, MeasureChain(in, r->covers, &sessions));
    report.sessions_created += sessions;
    NarrowToKernel(**entry, above);
  }
  return {};
}

}  // namespace

Result<LocateReport> Locate(const Model& model, const Model* target_model, const Sample& sample,
                            const LocateOptions& options) {
  if (HasControlFlow(model) || (target_model && HasControlFlow(*target_model)))
    return locate_internal::LocateThroughControlFlow(model, target_model, sample, options);
  return locate_internal::LocateGraphs(model, target_model, sample, options);
}

Result<LocateReport> locate_internal::LocateGraphs(const Model& model, const Model* target_model,
                                                   const Sample& sample, const LocateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // A QDQ model against a QDQ reference (itself at another config): its
  // quantized tensors are judged in steps of their scales (quant_steps.h).
  std::vector<ToleranceRule> step_rules;
  if (options.precision) {
    step_rules = StepRules(target_model ? *target_model : model);
    if (target_model && StepRules(model).empty()) step_rules.clear();  // a float reference: AnalyzePrecision
  }
  LocateOptions with_steps = options;
  if (!step_rules.empty()) with_steps.policy = WithStepRules(options.policy, step_rules);
  const LocateOptions& o = with_steps;
  LocateReport report;
  report.ort = CurrentOrt();
  report.model = o.model_label;
  report.target_model = target_model ? o.target_label : "";
  report.sample = sample.name;
  report.reference = o.reference;
  report.reference_kind = target_model ? Reference::Kind::kModel : Reference::Kind::kConfig;
  report.target = o.target;

  PARITY_ASSIGN_OR_RETURN(NamedModels m, locate_internal::NameModels(model, target_model, o));
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("locate"));
  PARITY_ASSIGN_OR_RETURN(LocatePlan p, locate_internal::PlanLocate(m, o, scratch.path(), report));
  // Structure only, for viewing: a failure to serialize leaves it empty.
  if (auto bytes = p.target.optimized.SerializeKeepingExternalData()) report.optimized_graph = std::move(*bytes);
  PARITY_ASSIGN_OR_RETURN(Traced traced, locate_internal::TraceInRounds(m, p, sample, o, scratch.path(), report));
  report.first_divergence = FindFirstDivergence(report, p.target.map);
  if (!step_rules.empty()) {
    report.quant = QuantReport{.kind = "qdq", .rule = "deployed config vs the reference config, in quantization steps"};
    report.quant->deployed = SummarizeSteps(report, step_rules);
    PARITY_RETURN_IF_ERROR(NarrowStepChains(m, p.target.map, traced.reference.values, sample, o, report));
  } else if (target_model && o.precision && IsDerivedPrecision(m.reference(), m.target())) {
    PARITY_ASSIGN_OR_RETURN(report.quant,
                            AnalyzePrecision(m.reference(), m.target(), sample,
                                             {.float_label = o.model_label, .derived_label = m.target_label,
                                              .policy = o.policy}));
    report.sessions_created += report.quant->sessions;
  }

  // 4-6. Culprits, ablation, reproduction.
  if (report.first_divergence) {
    Context ctx{.options = o,
                .sample = sample,
                .reference_model = m.reference(),
                .target_model = m.target(),
                .reference_view = m.reference_view,
                .target_view = m.target_view(),
                .plan = p.target,
                .scratch = scratch.path(),
                .reference_values = std::move(traced.reference.values),
                .reference_outputs = std::move(traced.reference.outputs),
                .target_outputs = std::move(traced.target_outputs),
                .tensor_row = std::move(p.row),
                .report = report};
    PARITY_RETURN_IF_ERROR(locate_internal::FindCulprits(ctx));
  }
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace parity
