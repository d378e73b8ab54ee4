// parity locate: where does the target depart from the reference, fused node
// by fused node (docs/contract.md (""locate""); docs/locate.md).
//
//   1. plan: the target session saves ORT's optimized model; the fusion map
//      (engine/run/fusion_map.h) gives the surviving tensors and the fused nodes;
//   2. observe: the surviving tensors are observed without perturbing the
//      target (observe.h, observer_check), and the same tensors in the
//      reference run;
//   3. compare in the reference model's topological order; each tensor is
//      pass / fail / unchecked (fused away); the first failing one is the
//      first divergence;
//   4. local vs inherited error (local_error.h) for the fused node of the
//      first divergence and the other suspects; culprits ranked by local error;
//   5. ablation (ablation.h): the optimizer that made each top culprit, and the
//      error and latency with it switched off;
//   6. --repro DIR (repro.h).
// Memory: each target tensor is compared as it arrives and only its metrics
// are kept; the reference values of the observed tensors are held until the
// culprits have been measured (region inputs are fed from them).
#pragma once

#include <filesystem>
#include <string>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/locate/locate_result.h"
#include "engine/run/observe.h"
#include "onnx/model.h"

namespace parity {

struct LocateOptions {
  RunConfig reference;  // default: disable
  RunConfig target = [] {
    RunConfig c;
    c.opt_level = OptLevel::kAll;
    return c;
  }();
  TolerancePolicy policy;
  std::string model_label = "model";
  std::string target_label;  // the --target-model path, if any
  bool ablation = true;
  bool precision = true;  // a QDQ / float16 target model: the per-layer precision report (engine/quant/quant_layers.h)
  bool drilldown = true;  // narrow a top culprit that covers several fused groups (drilldown.h)
  int latency_runs = 5;
  size_t max_suspects = 6;  // regions whose local error is measured
  size_t max_ablated = 3;   // top culprits that get an ablation
  // Tensors exposed in one observed run (at least 16). A graph with more
  // surviving tensors is searched for its first divergence in rounds
  // (docs/locate.md "Long graphs"): cost linear in the graph, not in N outputs.
  size_t max_observed = 4096;
  std::filesystem::path repro_dir;  // empty: no reproduction
  ObserveOptions observe;
  // The target's plan, made by the caller from the target model (node names
  // written) under `target` (CreatePlannedSession), its session already
  // released and its untouched outputs for the sample kept
  // (PlannedSession::untouched, output_names): Locate takes it over (moves
  // from it) instead of loading the target once more for its plan (check's
  // deployed session is that plan: one load of the weights fewer, issue 26).
  // Not used with `ablation` (which needs the optimizer log) or when the
  // target model has no node names; null: Locate makes its own.
  PlannedSession* target_plan = nullptr;
  // The reference's values on this very sample under `reference` (which
  // must not optimize), observed by the caller (check --torch's every-tensor
  // run): when they hold every tensor a round observes and the final
  // outputs, the round reads them instead of running the reference exposed.
  // Null: the reference is run.
  const TensorSet* reference_values = nullptr;
};

// `target_model`: a model derived from `model` sharing its tensor names, or
// null to judge `model` itself. Returns the report (a divergence is not an
// error). Errors: a model or sample ORT refuses, a runtime failure, an
// unwritable --repro directory.
Result<LocateReport> Locate(const Model& model, const Model* target_model, const Sample& sample,
                            const LocateOptions& options);

}  // namespace parity
