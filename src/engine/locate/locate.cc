#include "engine/locate/locate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "engine/locate/local_error.h"
#include "engine/locate/locate_internal.h"
#include "engine/run/runner.h"
#include "engine/locate/locate_steps.h"
#include "engine/locate/step_chain.h"
#include "engine/quant/layer_match.h"
#include "engine/quant/cast.h"
#include "engine/quant/quant_layers.h"
#include "engine/quant/quant_steps.h"
#include "onnx/edit.h"

namespace parity {

namespace {

using locate_internal::Context;

std::string MainNodeName(const FusedRegion& r) { return r.nodes.empty() ? "" : r.nodes[r.MainNode()]; }

LocateFusedNode ToReport(const FusedRegion& r) {
  const size_t main = r.MainNode();
  return {.name = MainNodeName(r),
          .op_type = r.op_types.empty() ? "" : r.op_types[main],
          .domain = r.domains.empty() ? "" : r.domains[main],
          .nodes = r.nodes,
          .op_types = r.op_types,
          .covers = r.covers,
          .inputs = r.boundary,
          .outputs = r.outputs};
}

// The rows of the tensor table, in the reference's topological order, and the
// list of tensors both sides observe.
std::vector<std::string> PlanTable(const GraphView& reference_view, const FusionMap& target_map,
                                   const FusionMap* reference_map, LocateReport& report,
                                   std::unordered_map<std::string, size_t>& row) {
  std::vector<std::string> observed;
  for (const auto& t : IntermediateTensors(reference_view)) {
    LocateTensor entry{.name = t.name, .producer = reference_view.nodes[t.producer].name, .index = t.producer};
    const bool in_target = target_map.IsSurviving(t.name);
    const bool in_reference = reference_map == nullptr || reference_map->IsSurviving(t.name);
    if (in_target && in_reference) {
      entry.fused_node = MainNodeName(*target_map.RegionOf(t.name));
      observed.push_back(t.name);
    } else if (!in_target) {
      auto it = target_map.fused_away.find(t.name);
      if (it != target_map.fused_away.end() && it->second >= 0) {
        const auto& r = target_map.regions[it->second];
        entry.fused_node = MainNodeName(r);
        entry.reason = fmt::format("fused away: inside '{}' ({})", entry.fused_node, r.OpSummary());
      } else {
        entry.reason = "not in the target's optimized graph (folded or removed)";
      }
    } else {
      entry.reason = "fused away in the reference's optimized graph";
    }
    row.emplace(t.name, report.tensors.size());
    report.tensors.push_back(std::move(entry));
  }
  return observed;
}

// The reference and target models with node names written (a copy only
// when a model lacks them), their graphs and labels.
struct NamedModels {
  const Model* model = nullptr;         // the caller's
  const Model* target_model = nullptr;  // the caller's, or null: the target is `model`
  Model reference_copy, target_copy;
  GraphView reference_view, target_view_copy;
  std::string target_label;

  const Model& reference() const { return reference_copy.valid() ? reference_copy : *model; }
  const Model& target() const {
    if (!target_model) return reference();
    return target_copy.valid() ? target_copy : *target_model;
  }
  const GraphView& target_view() const { return target_model ? target_view_copy : reference_view; }
};

Result<NamedModels> NameModels(const Model& model, const Model* target_model, const LocateOptions& o) {
  NamedModels m{.model = &model, .target_model = target_model};
  if (!HasNodeNames(model)) m.reference_copy = WithNodeNames(model);
  if (target_model && !HasNodeNames(*target_model)) m.target_copy = WithNodeNames(*target_model);
  m.target_label = target_model ? o.target_label : o.model_label;
  PARITY_ASSIGN_OR_RETURN(m.reference_view,
                          WithContext(BuildGraphView(m.reference(), {.infer_shapes = false}), o.model_label));
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(m.target_view_copy,
                            WithContext(BuildGraphView(m.target(), {.infer_shapes = false}), m.target_label));
  }
  return m;
}

// Both plans, the tensors both sides observe, the models' bytes, and the
// models with the tensors of the current round exposed (without a target
// model, the reference and the target observe the same bytes).
struct LocatePlan {
  PlannedSession target;
  std::optional<PlannedSession> reference;  // when the reference optimizes
  std::vector<std::string> observed;        // surviving both plans, reference topological order
  std::unordered_map<std::string, size_t> row;  // tensor -> index in report.tensors
  ort::ModelSource target_bytes;
  std::optional<ort::ModelSource> reference_bytes_copy;  // only with a target model
  std::vector<std::string> round;                        // the tensors exposed now
  ort::ModelSource reference_exposed;
  std::optional<ort::ModelSource> target_exposed_copy;  // only with a target model

  const ort::ModelSource& reference_bytes() const {
    return reference_bytes_copy ? *reference_bytes_copy : target_bytes;
  }
  const ort::ModelSource& target_exposed() const {
    return target_exposed_copy ? *target_exposed_copy : reference_exposed;
  }
};

// The models with `tensors` exposed, for one round of observation.
Status Expose(const NamedModels& m, LocatePlan& p, std::vector<std::string> tensors, const LocateOptions& o) {
  p.round = std::move(tensors);
  PARITY_ASSIGN_OR_RETURN(p.reference_exposed, ExposedSource(m.reference(), p.reference_bytes(), p.round,
                                                             o.model_label + " (reference)"));
  if (m.target_model) {
    PARITY_ASSIGN_OR_RETURN(p.target_exposed_copy, ExposedSource(m.target(), p.target_bytes, p.round, m.target_label));
  }
  return {};
}

// Steps 1 and the table: the target's plan (and the reference's, when it
// optimizes), the report's tensor rows and fused nodes.
Result<LocatePlan> PlanLocate(const NamedModels& m, const LocateOptions& o, const std::filesystem::path& scratch,
                              LocateReport& report) {
  // Each model is read by ORT from its file, or serialized once with its
  // sessions sharing the bytes (an 87 MB model copied per session dominated
  // locate's cost, docs/locate.md).
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource target_bytes, SourceOf(m.target(), m.target_label));
  std::optional<ort::ModelSource> reference_bytes_storage;
  if (m.target_model) {
    PARITY_ASSIGN_OR_RETURN(reference_bytes_storage, SourceOf(m.reference(), o.model_label));
  }
  // The caller's plan of the same target (check's deployed session), when
  // it can stand for the one made here: same names, no optimizer log needed.
  const bool named_as_given = m.target_model ? !m.target_copy.valid() : !m.reference_copy.valid();
  const bool callers_plan = o.target_plan != nullptr && !o.ablation && named_as_given &&
                            (o.target_plan->session || o.target_plan->untouched);
  PlannedSession target_plan;
  if (callers_plan) {
    target_plan = std::move(*o.target_plan);
  } else {
    PARITY_ASSIGN_OR_RETURN(target_plan,
                            CreatePlannedSession(target_bytes, m.target_view(), o.target, m.target_label,
                                                 scratch / "target_optimized.onnx",
                                                 {.capture_optimizer_log = o.ablation, .cpu_mem_arena = false}));
    ++report.sessions_created;
  }
  LocatePlan p{.target = std::move(target_plan),
               .target_bytes = std::move(target_bytes),
               .reference_bytes_copy = std::move(reference_bytes_storage)};
  if (ort::RecordsAssignment(o.target)) report.target_assignment = p.target.ep_assignment;
  report.original_nodes = m.target_view().nodes.size();
  report.optimized_nodes = p.target.optimized_view.nodes.size();
  for (const auto* r : p.target.map.Fused()) report.fused_nodes.push_back(ToReport(*r));

  // A reference that optimizes has a plan of its own; observe only what survives both.
  if (o.reference.opt_level != OptLevel::kDisable) {
    PARITY_ASSIGN_OR_RETURN(p.reference, CreatePlannedSession(p.reference_bytes(), m.reference_view, o.reference,
                                                              o.model_label, scratch / "reference_optimized.onnx"));
    ++report.sessions_created;
  }
  p.observed = PlanTable(m.reference_view, p.target.map, p.reference ? &p.reference->map : nullptr, report, p.row);
  return p;
}

// What the reference trace keeps: every observed tensor with the sample's
// inputs (region inputs are fed from them), and the final outputs.
struct ReferenceTrace {
  TensorSet values;
  TensorSet outputs;
};

// Step 2: the reference run, observed.
Result<ReferenceTrace> TraceReference(const NamedModels& m, const LocatePlan& p, const Sample& sample,
                                      const LocateOptions& o, const std::filesystem::path& scratch,
                                      LocateReport& report) {
  ReferenceTrace trace{.values = sample.tensors};
  const auto keep = [&](const std::string& name, const Tensor& t) -> Status {
    trace.values.Set(name, t);
    return {};
  };
  const std::string label = o.model_label + " (reference)";
  if (!p.reference && o.reference_values) {
    const auto given = [&](const std::string& name) { return o.reference_values->Contains(name); };
    if (std::all_of(p.round.begin(), p.round.end(), given) &&
        std::all_of(m.reference_view.outputs.begin(), m.reference_view.outputs.end(), given)) {
      for (const auto& name : p.round) trace.values.Set(name, *o.reference_values->Find(name));
      for (const auto& name : m.reference_view.outputs) trace.outputs.Set(name, *o.reference_values->Find(name));
      return trace;
    }
  }
  if (p.reference) {
    PARITY_ASSIGN_OR_RETURN(
        Observation obs,
        ObserveTarget({.plan = *p.reference, .exposed = p.reference_exposed, .view = m.reference_view,
                       .config = o.reference, .tensors = p.round, .scratch = scratch, .label = label},
                      sample, keep));
    report.sessions_created += obs.sessions;
    trace.outputs = std::move(obs.untouched_outputs);
    for (auto& n : obs.notes) report.observer_notes.push_back("reference: " + n);
    return trace;
  }
  PARITY_ASSIGN_OR_RETURN(TensorSet outs, ObserveUnoptimized(p.reference_exposed, o.reference, p.round, sample,
                                                             label, keep, &report.sessions_created));
  for (const auto& info : m.reference_view.outputs)
    if (const Tensor* t = outs.Find(info)) trace.outputs.Set(info, *t);
  return trace;
}

// Step 3: the target run, observed and compared tensor by tensor as it
// arrives. Returns the untouched target's final outputs.
Result<TensorSet> TraceTarget(const NamedModels& m, const LocatePlan& p, const Sample& sample,
                              const TensorSet& reference_values, const LocateOptions& o,
                              const std::filesystem::path& scratch, LocateReport& report) {
  const auto compare = [&](const std::string& name, const Tensor& test) -> Status {
    LocateTensor& entry = report.tensors[p.row.at(name)];
    const Tensor* ref = reference_values.Find(name);
    if (ref == nullptr) {
      entry.reason = "no reference value";
      return {};
    }
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, *ref, test, o.policy));
    entry.status = j.reason.empty() ? Verdict::kPass : Verdict::kFail;
    entry.reason = j.reason;
    entry.metrics = j.metrics;
    entry.tolerance = j.tolerance.tolerance;
    entry.score = j.score;
    return {};
  };
  PARITY_ASSIGN_OR_RETURN(
      Observation obs,
      ObserveTarget({.plan = p.target, .exposed = p.target_exposed(), .view = m.target_view(), .config = o.target,
                     .tensors = p.round, .scratch = scratch, .label = m.target_label, .options = o.observe},
                    FitToGraph(m.target_view(), sample), compare));
  report.sessions_created += obs.sessions;
  report.observer_check = obs.observer_check;
  report.observer_mode = ObserverModeName(obs.mode);
  for (auto& n : obs.notes) report.observer_notes.push_back(std::move(n));
  return std::move(obs.untouched_outputs);
}

// The indexes a round observes of the window [lo, hi): all when they fit in
// `k`, else every step-th one, the window's last included.
std::vector<size_t> RoundOf(size_t lo, size_t hi, size_t k) {
  std::vector<size_t> out;
  if (hi - lo <= k) {
    for (size_t i = lo; i < hi; ++i) out.push_back(i);
    return out;
  }
  const size_t step = (hi - lo + k - 1) / k;
  for (size_t i = hi - 1;; i -= step) {
    out.push_back(i);
    if (i < lo + step) break;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

struct Traced {
  ReferenceTrace reference;  // of the last round
  TensorSet target_outputs;
};

// Steps 2 and 3 in rounds of at most max_observed exposed tensors (docs/locate.md
// "Long graphs"). When every observed tensor fits, one round observes them
// all. Else a round observes every step-th tensor of the window (in the
// reference's topological order), and the next round the window from the last
// of them that passed to the first that failed, until a window fits whole: a
// graph of N tensors costs about log(N)/log(max_observed) observed runs of each
// side, none with more than max_observed extra outputs, instead of one run
// exposing N. It assumes an error shows in the tensors downstream of it (exact
// on a chain); a departure that no later sampled tensor sees can be missed.
Result<Traced> TraceInRounds(const NamedModels& m, LocatePlan& p, const Sample& sample, const LocateOptions& o,
                             const std::filesystem::path& scratch, LocateReport& report) {
  // The untouched sessions run first and are released: every observing
  // session is then created with no other alive (one copy of the weights).
  PARITY_RETURN_IF_ERROR(KeepUntouched(p.target, FitToGraph(m.target_view(), sample), m.target_label));
  if (p.reference) PARITY_RETURN_IF_ERROR(KeepUntouched(*p.reference, sample, o.model_label + " (reference)"));
  const size_t k = std::max<size_t>(o.max_observed, 16);  // a window shrinks each round
  size_t lo = 0, hi = p.observed.size(), rounds = 0;
  std::vector<bool> seen(p.observed.size(), false);
  Traced t;
  for (;;) {
    const std::vector<size_t> idx = RoundOf(lo, hi, k);
    std::vector<std::string> names;
    for (size_t i : idx) {
      names.push_back(p.observed[i]);
      seen[i] = true;
    }
    PARITY_RETURN_IF_ERROR(Expose(m, p, std::move(names), o));
    PARITY_ASSIGN_OR_RETURN(t.reference, TraceReference(m, p, sample, o, scratch, report));
    PARITY_ASSIGN_OR_RETURN(t.target_outputs, TraceTarget(m, p, sample, t.reference.values, o, scratch, report));
    ++rounds;
    if (idx.size() == hi - lo) break;
    const auto fail = std::find_if(idx.begin(), idx.end(), [&](size_t i) {
      return report.tensors[p.row.at(p.observed[i])].status == Verdict::kFail;
    });
    if (fail == idx.end()) break;  // no observed tensor departs
    hi = *fail + 1;
    if (fail != idx.begin()) lo = *(fail - 1);
  }
  if (rounds == 1) return t;
  size_t observed = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    observed += seen[i];
    if (!seen[i]) report.tensors[p.row.at(p.observed[i])].reason = "not observed (a long graph is searched in rounds)";
  }
  report.observer_notes.push_back(fmt::format(
      "{} of {} surviving tensors observed, in {} rounds of at most {} (a graph above {} surviving tensors is "
      "searched for its first divergence, not observed whole)",
      observed, p.observed.size(), rounds, k, k));
  return t;
}

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

  PARITY_ASSIGN_OR_RETURN(NamedModels m, NameModels(model, target_model, o));
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("locate"));
  PARITY_ASSIGN_OR_RETURN(LocatePlan p, PlanLocate(m, o, scratch.path(), report));
  PARITY_ASSIGN_OR_RETURN(Traced traced, TraceInRounds(m, p, sample, o, scratch.path(), report));
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
