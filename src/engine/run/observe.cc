#include "engine/run/observe.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "engine/runner/runner.h"
#include "engine/runner/session_run.h"
#include "onnx/edit.h"
#include "onnx/layout_reorder.h"

namespace parity {

namespace {

std::vector<std::string> Signatures(const FusionMap& map) {
  std::vector<std::string> s;
  for (const auto& r : map.regions) s.push_back(RegionSignature(r));
  std::sort(s.begin(), s.end());
  return s;
}

// A plan's identity from ORT's node assignment: which EP runs which node of
// the optimized graph, by name and op type, sorted.
std::vector<std::string> Signatures(const std::vector<ort::EpAssignment>& assignment) {
  std::vector<std::string> s;
  for (const auto& a : assignment)
    for (size_t i = 0; i < a.nodes.size(); ++i)
      s.push_back(fmt::format("{}|{}|{}", a.ep, i < a.op_types.size() ? a.op_types[i] : "", a.nodes[i]));
  std::sort(s.begin(), s.end());
  return s;
}

// The observed run and whether ORT planned it as it planned the untouched
// one. Where ORT says which EP took which node (ORT >= 1.24, both
// sessions), the plans are compared by that assignment: the exposed model
// on a runner that keeps its session and records the assignment, saving no
// optimized model (saving it costs a 500 MB model ~100-300 MB more at its
// peak and a pass over its weights, issue 26). Otherwise by the fused
// regions of the optimized model each saved (a planned session,
// optimized_plan.h).
struct ObservedSession {
  std::unique_ptr<Runner> runner;  // by assignment: its kept session
  RunnerJob job;
  std::unique_ptr<Runner> planned;  // by fused regions: the Runner keeping the planned session
  bool same_plan = false;

  Result<TensorSet> Run(const Sample& sample, const std::string& label) {
    if (!runner) return RunSample(*planned->kept_session(), sample, label);
    RunnerJob of_sample = job;
    of_sample.sample = sample.name;
    return runner->Run(of_sample, sample.tensors);
  }
};

Result<ObservedSession> CreateObservedSession(const TargetToObserve& target) {
  const PlannedSession& plan = target.plan;
  const RunConfig& config = target.config;
  const std::string& label = target.label;
  if (!plan.ep_assignment.empty()) {
    RunConfig plain = config;
    plain.optimized_model_path.clear();
    ObservedSession observed{.runner = MakeSessionRunner(plain),
                             .job = {.model = label + " (observed)",
                                     .keep_session = true,
                                     .source = &target.exposed,
                                     .record_assignment = true}};
    PARITY_RETURN_IF_ERROR(observed.runner->Prepare(observed.job));
    const auto& assignment = observed.runner->kept_session()->ep_assignment();
    if (!assignment.empty()) {
      observed.same_plan = Signatures(assignment) == Signatures(plan.ep_assignment);
      return observed;
    }
  }  // released: the planned session below is made with no other alive
  PARITY_ASSIGN_OR_RETURN(PlannedSession planned,
                          CreatePlannedSession(target.exposed, target.view, config, label + " (observed)",
                                               target.scratch / "observed_optimized.onnx"));
  const bool same = Signatures(planned.map) == Signatures(plan.map);
  return ObservedSession{.planned = std::move(planned.runner), .same_plan = same};
}

// Names of final outputs whose bytes differ from the untouched run's.
std::vector<std::string> DifferingOutputs(const TensorSet& untouched, const TensorSet& observed) {
  std::vector<std::string> differ;
  for (const auto& [name, tensor] : untouched) {
    const Tensor* t = observed.Find(name);
    if (t == nullptr || !t->BitwiseEquals(tensor)) differ.push_back(name);
  }
  return differ;
}

Status Deliver(const TensorSet& outputs, const std::vector<std::string>& tensors, const ObservedSink& sink) {
  for (const auto& name : tensors) {
    const Tensor* t = outputs.Find(name);
    if (t == nullptr) return InternalError(fmt::format("observed tensor '{}' missing from the run", name));
    PARITY_RETURN_IF_ERROR(sink(name, *t));
  }
  return {};
}

// The observed tensors ORT's optimized model holds only in its NCHWc layout
// (FusionMap::layout_sources), each to be reordered back by ORT's own node:
// its channel count is the original tensor's (`view`, shape-inferred).
Result<std::vector<LayoutReorder>> ReordersFor(const FusionMap& map, const GraphView& view,
                                               const std::vector<std::string>& tensors) {
  std::vector<LayoutReorder> reorders;
  for (const auto& t : tensors) {
    auto it = map.layout_sources.find(t);
    if (it == map.layout_sources.end()) continue;
    const TensorType* type = view.Type(t);
    if (type == nullptr || !type->has_shape || type->dims.size() < 2 || type->dims[1].kind != Dim::Kind::kKnown)
      return Unsupported(fmt::format("tensor '{}' is held in ORT's NCHWc layout and its channel count is unknown, "
                                     "so it cannot be reordered back from the optimized model",
                                     t));
    reorders.push_back({.blocked = it->second, .name = t, .channels = type->dims[1].value});
  }
  return reorders;
}

// ORT's saved optimized model of `plan`, weights loaded, with `tensors`
// exposed (those it holds only in NCHWc layout reordered back first; their
// channel counts from `view`, else from shape inference on the exposed
// original model, `exposed`, when the view was built without it).
Result<Model> FallbackModel(const PlannedSession& plan, const GraphView& view, const ort::ModelSource& exposed,
                            const std::vector<std::string>& tensors, const std::string& label) {
  PARITY_ASSIGN_OR_RETURN(Model optimized, LoadOptimizedWithWeights(plan, label));
  auto reorders = ReordersFor(plan.map, view, tensors);
  if (!reorders) {  // a view built without shape inference: infer on the exposed original once
    auto model = exposed.is_file() ? Model::Load(exposed.path()) : Model::FromBytes(exposed.bytes(), label);
    if (model)
      if (auto typed = BuildGraphView(*model, {.infer_shapes = true})) reorders = ReordersFor(plan.map, *typed, tensors);
  }
  if (!reorders) return std::unexpected(reorders.error());
  PARITY_ASSIGN_OR_RETURN(Model reordered, WithContext(WithLayoutReorders(optimized, *reorders), label));
  return WithContext(WithExtraOutputs(reordered, tensors), label);
}

}  // namespace

std::string_view ObserverModeName(ObserverMode mode) {
  switch (mode) {
    case ObserverMode::kExposed:
      return "exposed";
    case ObserverMode::kOptimizedModel:
      return "optimized_model";
  }
  return "?";
}

Result<Observation> ObserveTarget(const TargetToObserve& target, const Sample& sample, const ObservedSink& sink) {
  const auto& [plan, exposed, view, config, tensors, scratch, label, options] = target;
  Observation obs;
  if (plan.untouched) {  // run, and its session released, before this observation (KeepUntouched)
    obs.untouched_outputs = *plan.untouched;
    obs.untouched_run_ms = plan.untouched_run_ms;
  } else {
    if (!plan.session()) return InternalError(fmt::format("{}: no untouched session nor its outputs", label));
    const auto start = std::chrono::steady_clock::now();
    PARITY_ASSIGN_OR_RETURN(obs.untouched_outputs, RunSample(*plan.session(), sample, label));
    obs.untouched_run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const auto output_names = plan.session() ? plan.session()->output_names() : plan.output_names;

  // 1. The original model with the surviving tensors exposed, same config.
  TensorSet outputs;
  bool same_plan = false;
  {
    PARITY_ASSIGN_OR_RETURN(ObservedSession observed, CreateObservedSession(target));
    ++obs.sessions;
    same_plan = observed.same_plan;
    PARITY_ASSIGN_OR_RETURN(outputs, observed.Run(sample, label + " (observed)"));
  }  // released: the fallback creates sessions of its own
  const auto differ = DifferingOutputs(obs.untouched_outputs, outputs);
  if (!differ.empty())
    obs.notes.push_back(fmt::format("with {} surviving tensors exposed, final output(s) {} differ bitwise",
                                    tensors.size(), fmt::join(differ, ", ")));
  if (!same_plan)
    obs.notes.push_back("with the surviving tensors exposed, ORT fused the graph differently");
  if (options.simulate_plan_change)
    obs.notes.push_back("plan change simulated (test hook): the exposed observation is not trusted");
  if (differ.empty() && same_plan && !options.simulate_plan_change) {
    obs.observer_check = true;
    obs.mode = ObserverMode::kExposed;
    PARITY_RETURN_IF_ERROR(Deliver(outputs, tensors, sink));
    return obs;
  }

  // A compiling EP (OpenVINO) has no saved optimized model to fall back on
  // (compiled_plan.h): the exposed observation is kept, and not trusted.
  if (plan.optimized_path.empty() || !options.fallback) {
    obs.mode = ObserverMode::kExposed;
    obs.notes.push_back(plan.optimized_path.empty()
                            ? "the target EP compiles subgraphs, so ORT saves no optimized model to fall back on; "
                              "the exposed observation is kept (observer_check false)"
                            : "the fallback to ORT's saved optimized model was not run (not asked for); the exposed "
                              "observation is kept (observer_check false)");
    PARITY_RETURN_IF_ERROR(Deliver(outputs, tensors, sink));
    return obs;
  }

  // 2. Fallback: the untouched session's own optimized graph, not re-optimized.
  obs.mode = ObserverMode::kOptimizedModel;
  PARITY_ASSIGN_OR_RETURN(Model fallback,
                          FallbackModel(plan, view, exposed, tensors, label + " (optimized model)"));
  RunConfig frozen = config;
  frozen.opt_level = OptLevel::kDisable;
  frozen.disabled_optimizers.clear();
  frozen.optimized_model_path.clear();
  PARITY_ASSIGN_OR_RETURN(outputs, MakeSessionRunner(frozen)->Run({.model = label + " (optimized model)",
                                                                    .loaded = &fallback,
                                                                    .sample = sample.name},
                                                                   sample.tensors));
  ++obs.sessions;
  auto fallback_differ = DifferingOutputs(obs.untouched_outputs, outputs);
  if (options.simulate_fallback_mismatch && fallback_differ.empty())
    fallback_differ.push_back(output_names.empty() ? "?" : output_names.front() + " (simulated)");
  obs.observer_check = fallback_differ.empty();
  if (obs.observer_check)
    obs.notes.push_back("fallback: ran ORT's saved optimized model at 'disable' with the tensors exposed; "
                        "its final outputs are bitwise identical to the untouched run");
  else
    obs.notes.push_back(fmt::format(
        "fallback: ORT's saved optimized model at 'disable' still differs bitwise in {}; the observed "
        "values may not be what the untouched target computes",
        fmt::join(fallback_differ, ", ")));
  PARITY_RETURN_IF_ERROR(Deliver(outputs, tensors, sink));
  return obs;
}

Result<TensorSet> ObserveUnoptimized(const ort::ModelSource& exposed, const RunConfig& config,
                                     const std::vector<std::string>& tensors, const Sample& sample,
                                     const std::string& label, const ObservedSink& sink, int* sessions) {
  PARITY_ASSIGN_OR_RETURN(TensorSet outputs,
                          MakeSessionRunner(config)->Run({.model = label, .sample = sample.name, .source = &exposed},
                                                         sample.tensors));
  if (sessions) ++*sessions;
  PARITY_RETURN_IF_ERROR(Deliver(outputs, tensors, sink));
  return outputs;
}

}  // namespace parity
