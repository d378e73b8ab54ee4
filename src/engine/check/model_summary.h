// A model's signature and structure as console text: what `parity inspect`
// prints. The JSON forms (`inspect --json`, a report's "model") are written by
// report/inspect_json.h.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "engine/torch/torch_scope.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "onnx/validate.h"

namespace parity {

// Which PyTorch modules the exporter recorded for the model's nodes
// (engine/torch_scope.h): how, for how many nodes, and each innermost module
// path with its node count, in the order the modules first appear.
struct ScopeSummary {
  ScopeSource source = ScopeSource::kNone;
  int64_t nodes = 0;
  int64_t scoped = 0;  // nodes inside some module (not at the root)
  std::vector<std::pair<std::string, int64_t>> modules;
};
// Errors: the graph is invalid (graph.h).
Result<ScopeSummary> SummarizeScopes(const Model& m);
// At most `max_modules` module lines, then how many more.
std::string FormatScopeSummary(const ScopeSummary& s, size_t max_modules = 40);

// "pass" when no finding is an error, else "FAIL", with the library's limits.
std::string CheckerVerdict(const std::vector<Finding>& findings);

// Multi-line, human-readable: opsets, producer, inputs/outputs with symbolic
// dims, op counts, checker findings.
std::string FormatModelInfo(const ModelInfo& info, const std::vector<Finding>& findings);

}  // namespace parity
