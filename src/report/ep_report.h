// How every report shows which EP took which nodes (ORT's assignment) and the
// arithmetic a target's error is consistent with: console lines and JSON, one
// home for check and locate.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/run/arithmetic.h"
#include "ort/session.h"

namespace parity {

// One line per EP: "OpenVINOExecutionProvider: 1 compiled subgraph, 21 nodes
// (Conv 20, Relu 1)", "CPUExecutionProvider: 2 nodes fell back (Shape, Gather)";
// empty for an empty assignment.
std::vector<std::string> AssignmentLines(const std::vector<ort::EpAssignment>& assignment);

// [{"ep", "subgraphs", "nodes": [{"name", "op_type"}]}], one entry per EP.
nlohmann::json AssignmentToJson(const std::vector<ort::EpAssignment>& assignment);

// {"arithmetic", "relative_error", "unit_roundoff", "cause", "fix", "summary"}; null for none.
nlohmann::json ArithmeticToJson(const std::optional<ArithmeticVerdict>& verdict);

}  // namespace parity
