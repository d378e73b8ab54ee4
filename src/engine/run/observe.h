// Observing a run without perturbing it (docs/contract.md "observer check";
// "marking every tensor as an output will break all fusion").
//
// The target is first run untouched; then the surviving tensors of its plan
// are exposed as extra outputs of the ORIGINAL model under the same config.
// That observation is trusted only when (a) every final output is bitwise
// identical to the untouched run's and (b) ORT made the same plan as for the
// untouched model: the same nodes by name and op type on the same EPs, where
// ORT reports its node assignment (the observed session then saves no
// optimized model), else the same fused regions (same op types, domains and
// outputs) of the optimized models both saved. If not,
// ORT changed its plan because of the extra outputs; the fallback then runs
// the optimized model ORT saved for the untouched session, at `disable` (so
// nothing is re-planned), with the same tensors exposed, and checks (a)
// again. The mode used and every discrepancy are reported.
//
// Thread-compatible; creates ORT sessions (counted in `sessions`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/run/optimized_plan.h"
#include "engine/runner/session_run.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity {

using ObservedSink = std::function<Status(const std::string&, const Tensor&)>;

struct ObserveOptions {
  // Test hook: behave as if ORT had planned the exposed model differently,
  // forcing the fallback (there is no known CPU case where exposing a
  // surviving tensor changes ORT 1.29's plan; see docs/locate.md).
  bool simulate_plan_change = false;
  // Test hook: also behave as if the fallback's outputs differed, so that
  // observer_check is false.
  bool simulate_fallback_mismatch = false;
  // False: when exposing changes ORT's plan, keep the exposed observation
  // (observer_check false, said in a note) instead of the fallback, which
  // has ORT save its optimized model again with the weights and builds two
  // more sessions (6.4 s and 500 MB written for gpt2_small): a passing
  // check's layer curve, which `parity locate` can redo exactly.
  bool fallback = true;
};

// How the target's tensors were observed: exposed as extra outputs of the
// original model, or (the fallback) of ORT's saved optimized model.
enum class ObserverMode { kExposed, kOptimizedModel };
std::string_view ObserverModeName(ObserverMode mode);  // "exposed", "optimized_model"

struct Observation {
  TensorSet untouched_outputs;  // the target's final outputs, unobserved
  bool observer_check = false;  // final outputs bitwise equal with and without observation
  ObserverMode mode = ObserverMode::kExposed;
  std::vector<std::string> notes;
  int sessions = 0;
  double untouched_run_ms = 0;
};

// ExposedSource (the model with tensors exposed, as bytes ORT parses): engine/runner/session_run.h.

// A target to observe: its untouched session, the same model with the
// tensors to observe exposed, and how to run it. The references must outlive
// the ObserveTarget call.
struct TargetToObserve {
  const PlannedSession& plan;        // the untouched target session
  const ort::ModelSource& exposed;   // ExposedSource(the model `plan` was created from, tensors)
  const GraphView& view;             // that model's graph
  const RunConfig& config;           // the config `plan` runs under
  const std::vector<std::string>& tensors;  // surviving tensors, topological order
  std::filesystem::path scratch;     // where ORT saves the observed session's optimized model
  std::string label;                 // names the model in errors and notes
  ObserveOptions options = {};
};

// Runs `target.plan` once, then observes `target.tensors` on `sample` and
// hands each, in that order, to `sink`.
// Errors: session creation or run failures, and the sink's errors.
Result<Observation> ObserveTarget(const TargetToObserve& target, const Sample& sample, const ObservedSink& sink);

// Runs `exposed` (ExposedSource of the model and `tensors`) under `config` (meant for `disable`, where
// there is no plan to perturb), runs one sample and hands them to `sink` in
// order. Returns the final outputs.
Result<TensorSet> ObserveUnoptimized(const ort::ModelSource& exposed, const RunConfig& config,
                                     const std::vector<std::string>& tensors, const Sample& sample,
                                     const std::string& label, const ObservedSink& sink, int* sessions);

}  // namespace parity
