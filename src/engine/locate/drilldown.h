// Drill-down: narrowing a culprit region that covers several fused groups to
// the one group that changed the numbers (docs/locate.md, step 4b;
// measured in docs/drilldown.md).
//
// At `all` on x86, ORT's NCHWc transformer renames every tensor between
// consecutive convolutions, so a CNN trunk is one region when observed from
// outside. Its original tensors still exist in the original model, so the
// region can be cut there:
//   1. groups: the region's target model is planned once more with the
//      layout transformer switched off (NchwcTransformer); each region of
//      that plan is one fused group (Conv+BN, Conv+Add+Relu, ...): the node
//      and what ORT fuses into it;
//   2. the region's original nodes, in topological order, are split into two
//      contiguous ranges at a position that keeps every group whole (the most
//      balanced first, then the one with fewest tensors crossing it);
//   3. each range is cut out of its parent step's models (ExtractRegion),
//      fed the reference values of its inputs and run under both configs
//      (RunRegion: ORT re-plans it as it would); the first range in
//      topological order whose local error exceeds the tolerance (fails it,
//      with a score of at least min(1, region's score / 4): a range failing
//      elementwise at rounding-noise level does not count) is kept and split
//      again, until it is one group. When the first half does not reproduce
//      the error, the second is entered without being run (`measured` false:
//      the region reproduces it and the first half does not) and is run only
//      if none of its own sub-ranges reproduces it. The reference run of a
//      range gives the reference values of the tensors it hands to the next,
//      so only cut tensors are kept in memory (those met along the search).
//   4. when no range of a cut reproduces the error (ORT fuses across the cut,
//      or the error builds up over several groups), up to `max_cut_tries`
//      cuts are tried; then narrowing stops with a note, at the smallest
//      range that reproduces the error.
// The planning functions below are pure (GraphView only) and unit-tested.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "engine/locate/local_error.h"
#include "engine/locate/locate_result.h"
#include "engine/run/fusion_map.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity {

// The nodes a drill-down splits: indices into a region's GraphView in
// topological order (Constant nodes left out: ExtractRegion keeps them with
// their readers), each with its fused group (-1: none, e.g. folded away).
struct DrillNodes {
  std::vector<size_t> nodes;  // a topological order
  std::vector<int> group;  // parallel to `nodes`
};

// Builds DrillNodes from `view` and a fusion map of the same graph (the
// plan without layout renaming): each map region is a group. The order is
// topological with each group's nodes made adjacent where that is possible
// (a group moves to its last node), else the view's order.
DrillNodes GroupNodes(const GraphView& view, const FusionMap& groups);

// Distinct groups among nodes[lo, hi).
size_t CountGroups(const DrillNodes& d, size_t lo, size_t hi);

// The tensors of a range nodes[lo, hi): `inputs`, what it reads that it does
// not produce (no initializers, no Constant outputs), in first-read order;
// `outputs`, what it produces that a node of `d` outside the range reads or
// that is among `region_outputs`, in production order.
struct RangeTensors {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};
RangeTensors TensorsOfRange(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi,
                            const std::vector<std::string>& region_outputs);

// Positions p in (lo, hi) that split nodes[lo, hi) into [lo, p) and [p, hi)
// without splitting a group, each side holding at least one group; best
// first: most balanced in groups, then fewest tensors crossing the cut.
std::vector<size_t> CandidateCuts(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi,
                                  const std::vector<std::string>& region_outputs);

struct DrillOptions {
  RunConfig reference;
  RunConfig target;
  TolerancePolicy policy;
  std::string label;                 // for messages
  std::filesystem::path scratch;     // where the plans are saved
  size_t max_cut_tries = 3;          // cuts tried per step before giving up
  // Optimizers switched off to see the groups under the target's layout renaming.
  std::vector<std::string> layout_optimizers = {"NchwcTransformer"};
};

struct DrillResult {
  LocateNarrowing narrowing;  // steps[0] is the whole region
  bool narrowed = false;      // the last step is smaller than the region
  RegionModels models;        // the last step's models and inputs (when narrowed)
  RegionRun run;              // its run
  GraphView target_view;      // of models.target
  FusedRegion group;          // the last step as ORT plans it under the target config
  std::vector<std::string> inputs, outputs;  // the last step's tensors
};

// Narrows `region` (a culprit's cut-out models, fed reference values) whose
// local error is `local`. When the region holds one group or fewer, returns
// narrowed=false with a single step and no sessions beyond the group plan.
// Errors: sessions ORT refuses to create or run (a sub-region that cannot be
// cut is a note, not an error). Thread-compatible; creates ORT sessions
// (counted in *sessions and in the narrowing) and writes plans to `scratch`.
Result<DrillResult> DrillDown(const RegionModels& region, const ErrorSummary& local, const DrillOptions& options,
                              int* sessions);

}  // namespace parity
