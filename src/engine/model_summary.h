// A model's signature and structure as plain JSON and console text: what
// `parity inspect` prints and what reports carry under "model".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {

nlohmann::json ModelInfoToJson(const ModelInfo& info);
nlohmann::json FindingsToJson(const std::vector<Finding>& findings);
// Multi-line, human-readable: opsets, producer, inputs/outputs with symbolic
// dims, op counts, checker findings.
std::string FormatModelInfo(const ModelInfo& info, const std::vector<Finding>& findings);

}  // namespace parity
