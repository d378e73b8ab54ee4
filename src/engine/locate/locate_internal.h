// Internal to src/engine/locate: the stages of Locate (locate.h) and what
// they hand each other. Step 1 and the tensor table (locate_plan.cc): the
// models named, the plans, the tensors both sides observe. Steps 2-3
// (locate_trace.cc): the observed runs, in rounds on long graphs. Steps 4-6
// (locate_culprits.cc): what the culprit stages read from the plan and the
// two traces (locate.cc builds the Context once the first divergence is
// known).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/locate/locate.h"
#include "engine/run/observe.h"
#include "engine/run/optimized_plan.h"
#include "onnx/graph.h"

namespace parity::locate_internal {

// Locate (locate.h) on models without control flow (locate.cc).
Result<LocateReport> LocateGraphs(const Model& model, const Model* target_model, const Sample& sample,
                                  const LocateOptions& options);
// Locate on models with If/Loop/Scan nodes (locate_control_flow.cc): on
// their observation copies for the sample (engine/run/flatten_control_flow.h), the
// report naming body nodes and saying what was not observed.
Result<LocateReport> LocateThroughControlFlow(const Model& model, const Model* target_model, const Sample& sample,
                                              const LocateOptions& options);

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

Result<NamedModels> NameModels(const Model& model, const Model* target_model, const LocateOptions& o);

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

// The name of a fused region's main node ("" for none).
std::string MainNodeName(const FusedRegion& r);

// The models with `tensors` exposed, for one round of observation.
Status Expose(const NamedModels& m, LocatePlan& p, std::vector<std::string> tensors, const LocateOptions& o);

// Steps 1 and the table: the target's plan (and the reference's, when it
// optimizes), the report's tensor rows and fused nodes.
Result<LocatePlan> PlanLocate(const NamedModels& m, const LocateOptions& o, const std::filesystem::path& scratch,
                              LocateReport& report);

// What the reference trace keeps: every observed tensor with the sample's
// inputs (region inputs are fed from them), and the final outputs.
struct ReferenceTrace {
  TensorSet values;
  TensorSet outputs;
};

// What steps 2-3 hand on: the reference's trace and the untouched target's
// final outputs.
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
                             const std::filesystem::path& scratch, LocateReport& report);

// What the culprit stages (4-6) read from the plan and the two traces.
struct Context {
  const LocateOptions& options;
  const Sample& sample;
  const Model& reference_model;  // node names written
  const Model& target_model;     // node names written (may be the same object)
  const GraphView& reference_view;
  const GraphView& target_view;
  const PlannedSession& plan;  // the untouched target
  const std::filesystem::path& scratch;
  TensorSet reference_values;      // observed reference tensors and the sample's inputs
  TensorSet reference_outputs;     // the reference's final outputs
  TensorSet target_outputs;        // the untouched target's final outputs
  std::unordered_map<std::string, size_t> tensor_row;  // name -> index in report.tensors
  LocateReport& report;
};

// Measures the suspects' local and inherited errors, ranks them, runs the
// ablations and writes the reproduction. Fills report.culprits / report.repro.
Status FindCulprits(Context& ctx);

// What names the top culprit's arithmetic (arithmetic_evidence.cc): the
// derived model's kind, the error's start when it is one node, and, unless
// the target's config names the format itself, how well the reference re-run
// with bf16 and with fp16 rounding emulated reproduces the target's errors
// (one session each; a failed emulation is a note).
ArithmeticEvidence GatherArithmeticEvidence(Context& ctx);

}  // namespace parity::locate_internal
