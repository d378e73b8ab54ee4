// What `parity locate` found, as plain data: the engine (engine/locate/locate.h)
// fills it; report/locate_report.h writes it (schema parity.locate/1, JSON and
// console, documented in docs/locate.md and docs/contract.md ("The locate
// report")). Header only, without ONNX or ORT, so the writers compile without
// them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_sets.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/run_config.h"
#include "engine/load/reference.h"
#include "engine/locate/runtime_diff_result.h"
#include "engine/quant/quant_result.h"
#include "engine/run/arithmetic.h"
#include "engine/run/control_flow_report.h"
#include "ort/session.h"

namespace parity {

// The worst tensor of a group (a region's outputs or inputs), judged by
// `score`: max_abs / (atol + rtol * max|ref|), so 1 is the tolerance band.
struct ErrorSummary {
  std::string tensor;  // empty when the group had nothing to measure
  double max_abs = 0;
  double max_rel = 0;
  int64_t mismatches = 0;
  double score = 0;
  bool pass = true;
  double snr_db = std::numeric_limits<double>::infinity();  // the error pattern (engine/run/arithmetic.h)

  // Whether anything departs: a nonzero (or NaN) error, an element out of
  // band, or a failed judgment. An empty summary (nothing measured) has none.
  bool HasError() const { return !pass || mismatches > 0 || !(max_abs == 0); }
};

struct LocateFusedNode {
  std::string name;     // the main optimized node ("ReorderInput" chains name their Conv)
  std::string op_type;  // its op type
  std::string domain;   // "" = ai.onnx
  std::vector<std::string> nodes;     // every optimized node of the region
  std::vector<std::string> op_types;  // parallel to nodes
  std::vector<std::string> covers;    // original node names
  std::vector<std::string> inputs;    // boundary tensors (where the covered nodes start)
  std::vector<std::string> outputs;   // surviving tensors it produces
};

struct LocateTensor {
  std::string name;
  std::string producer;    // original node
  std::string fused_node;  // optimized node producing it (or covering its producer); may be empty
  size_t index = 0;        // topological index of the producer in the original graph
  Verdict status = Verdict::kUnchecked;
  std::string reason;                  // why it failed or was not checked
  std::optional<TensorMetrics> metrics;  // present unless unchecked
  Tolerance tolerance;
  double score = 0;
};

struct FirstDivergence {
  std::string tensor;
  std::string producer;
  std::string fused_node;
  std::string op_type;
  std::vector<std::string> covers;
  // The producer came from an If/Loop body: "node 'Mul' in Loop 'loop'
  // iteration 2" (engine/run/flatten_control_flow.h); empty otherwise.
  std::string body;
};

struct LocateAblation {
  std::string optimizer;                // the one whose switching off removes the fused node; empty: none found
  std::vector<std::string> tried;       // optimizers tried, in order
  std::vector<std::string> also_removing;  // others whose switching off also removes it
  ErrorSummary local_with, local_without;  // the region fed reference inputs
  ErrorSummary output_with, output_without;  // the model's final outputs against the reference
  double latency_ms_with = 0;   // median whole-model latency
  double latency_ms_without = 0;
  std::string note;
};

// One step of a drill-down (engine/locate/drilldown.h): a sub-region of a culprit
// region, cut at original tensors, fed reference values and run under both
// configs on its own.
struct LocateNarrowingStep {
  std::vector<std::string> covers;   // original node names, topological order
  std::vector<std::string> inputs;   // the cut tensors (and region inputs) it is fed
  std::vector<std::string> outputs;  // what it is compared on
  size_t groups = 0;                 // fused groups it holds (ORT's plan without layout renaming)
  // False: entered without being run (the region reproduced the error and
  // the half before this one did not); `local` is then empty.
  bool measured = true;
  ErrorSummary local;
};

// How a culprit region that covers several fused groups was narrowed.
struct LocateNarrowing {
  std::vector<LocateNarrowingStep> steps;  // first: the whole region; last: the smallest that reproduces
  bool complete = false;                   // the last step is one fused group
  std::string note;                        // why narrowing stopped early, if it did
  int sessions = 0;                        // sessions the drill-down created
  int sub_regions_run = 0;                 // sub-regions cut out and run
};

struct LocateCulprit {
  std::string fused_node;
  std::string op_type;
  bool fused = true;  // false: an unchanged node (no fusion to blame: the model itself differs)
  std::vector<std::string> covers;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  ErrorSummary local;
  ErrorSummary inherited;
  std::optional<LocateAblation> ablation;
  std::optional<LocateNarrowing> narrowing;  // present when the region was narrowed
  std::string note;
  std::string body;  // the culprit's node came from an If/Loop body (as FirstDivergence::body)

  // A culprit neither computing an error of its own nor receiving one
  // explains nothing: it is never reported as a cause (FindCulprits drops it).
  bool HasError() const { return local.HasError() || inherited.HasError(); }
};

struct LocateReport {
  OrtFact ort;  // which ONNX Runtime ran (engine/run/environment.h)
  std::string model;
  std::string target_model;  // empty: the same model
  std::string sample;
  RunConfig reference;
  // kConfig: the same model under `reference`; kModel: the model a
  // --target-model derives from, under `reference` (reference.h).
  Reference::Kind reference_kind = Reference::Kind::kConfig;
  RunConfig target;
  bool observer_check = false;
  std::string observer_mode;  // "exposed" or "optimized_model"
  std::vector<std::string> observer_notes;
  size_t original_nodes = 0;
  size_t optimized_nodes = 0;
  std::vector<LocateFusedNode> fused_nodes;
  std::vector<LocateTensor> tensors;
  std::optional<FirstDivergence> first_divergence;
  std::vector<LocateCulprit> culprits;  // by local score, largest first
  std::string repro;                    // directory, when written
  // ORT's optimized model of the target, structure only (its initializers
  // are references to a data file that does not exist): what a graph viewer
  // shows as the deployed graph (report/overlays/model_explorer.h). Empty when ORT
  // saved none (a compiling EP) or it could not be serialized.
  std::string optimized_graph;
  // A target derived by a quantizer or a float16 converter: its per-layer
  // precision (engine/quant/quant_layers.h, docs/quantized.md).
  std::optional<QuantReport> quant;
  std::vector<std::string> notes;
  int sessions_created = 0;
  double wall_ms = 0;
  // Which EP took which nodes of the target (ORT's assignment; empty for a
  // CPU-only target), and the arithmetic the top culprit's local error is
  // consistent with (engine/run/arithmetic.h).
  std::vector<ort::EpAssignment> target_assignment;
  std::optional<ArithmeticVerdict> arithmetic;
  // The model's If/Loop bodies, observed on this sample through an
  // observation copy (engine/run/flatten_control_flow.h): the branches taken, the
  // bodies left unobserved. `present` false for a model without control flow.
  ControlFlowReport control_flow;
  // Two runtimes at one config (runtime_diff.h): both, and their plans compared.
  std::optional<RuntimeComparison> runtimes;

  size_t CountStatus(Verdict v) const {
    size_t n = 0;
    for (const auto& t : tensors) n += t.status == v;
    return n;
  }
  bool diverged() const { return first_divergence.has_value(); }
};

}  // namespace parity
