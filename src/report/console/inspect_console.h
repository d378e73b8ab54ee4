// What `parity inspect` prints: a model's signature and structure, its
// checker verdict and the PyTorch module scopes of its nodes, as console text.
// The JSON forms (`inspect --json`, a report's "model") are report/json/inspect_json.h.
#pragma once

#include <string>
#include <vector>

#include "engine/check/model_summary.h"
#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {

// At most `max_modules` module lines, then how many more.
std::string FormatScopeSummary(const ScopeSummary& s, size_t max_modules = 40);

// "pass" when no finding is an error, else "FAIL", with the library's limits.
std::string CheckerVerdict(const std::vector<Finding>& findings);

// Multi-line, human-readable: opsets, producer, inputs/outputs with symbolic
// dims, op counts, checker findings.
std::string FormatModelInfo(const ModelInfo& info, const std::vector<Finding>& findings);

}  // namespace parity
