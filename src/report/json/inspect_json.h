// The JSON forms of a model's facts: `parity inspect --json` (parity.inspect/1,
// docs/contract.md) and what the check report carries under "model". The
// facts come from onnx/inspect.h, onnx/validate.h and
// engine/check/model_summary.h.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/check/model_summary.h"
#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {

nlohmann::json ModelInfoToJson(const ModelInfo& info);
nlohmann::json FindingsToJson(const std::vector<Finding>& findings);
nlohmann::json ScopeSummaryToJson(const ScopeSummary& s);

// `parity inspect --json`: {"schema": "parity.inspect/1", "model": the path,
// "info", "checker": the verdict line (CheckerVerdict), "findings", "scopes"
// (null when `scopes` is null: they could not be read)}.
nlohmann::json InspectReportToJson(const std::string& model_path, const ModelInfo& info,
                                   const std::vector<Finding>& findings, const std::string& checker,
                                   const ScopeSummary* scopes);

}  // namespace parity
