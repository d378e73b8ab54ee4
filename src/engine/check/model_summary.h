// Which PyTorch modules a model's nodes belong to, summarized for `parity
// inspect`. Its console text is report/console/inspect_console.h, its JSON
// report/json/inspect_json.h.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "engine/torch/torch_scope.h"
#include "onnx/model.h"

namespace parity {

// Which PyTorch modules the exporter recorded for the model's nodes
// (engine/torch/torch_scope.h): how, for how many nodes, and each innermost module
// path with its node count, in the order the modules first appear.
struct ScopeSummary {
  ScopeSource source = ScopeSource::kNone;
  int64_t nodes = 0;
  int64_t scoped = 0;  // nodes inside some module (not at the root)
  std::vector<std::pair<std::string, int64_t>> modules;
};
// Errors: the graph is invalid (graph.h).
Result<ScopeSummary> SummarizeScopes(const Model& m);

}  // namespace parity
