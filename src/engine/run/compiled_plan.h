// The plan of a session whose EP compiles subgraphs (OpenVINO, TensorRT, any
// plugin EP): ORT cannot save such a session's optimized model ("contains
// compiled nodes"), so the plan is read from ORT's own node assignment
// (ort::Session::ep_assignment) instead: each compiled subgraph becomes one
// node of a view of the original graph that reads what the subgraph reads
// from outside and writes what is read outside it (or is a graph output);
// nodes ORT kept on a kernel EP (CPU) stay as they are. BuildFusionMap over
// that view makes each compiled subgraph one region, as a fused group is.
#pragma once

#include <string>
#include <vector>

#include "core/run_config.h"
#include "onnx/graph.h"
#include "ort/session.h"

namespace parity {

// True when `config` names a provider whose sessions parity plans from the
// node assignment (any provider but cpu and cuda).
bool PlansFromAssignment(const RunConfig& config);

// The view described above, in topological order. A compiled subgraph's node
// is named "<EP>_subgraph_<k>" with op type <EP>. Original nodes no
// assignment names (removed by ORT's basic optimizations) are left out.
// Never fails; precondition: `original` is a valid view.
GraphView AssignedView(const GraphView& original, const std::vector<ort::EpAssignment>& assignment);

}  // namespace parity
