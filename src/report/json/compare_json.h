// JSON forms of the comparison engine's results (plain data in, JSON out).
// Non-finite numbers (snr_db = +inf, ...) are written as strings "inf",
// "-inf", "nan", since JSON has no such numbers (report/json/json_helpers.h). Schema: docs/compare.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "compare/compare_sets.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"

namespace parity {


nlohmann::json MetricsToJson(const TensorMetrics& m);
nlohmann::json ResolvedToleranceToJson(const ResolvedTolerance& t);
nlohmann::json TensorComparisonToJson(const TensorComparison& c);
nlohmann::json StructuralFindingToJson(const StructuralFinding& f);
// {"passed", "findings": [...], "tensors": [...]}
nlohmann::json SetComparisonToJson(const SetComparison& s);

// `parity compare --json` (parity.compare/1, docs/compare.md): the keys of
// SetComparisonToJson, "schema", the "reference" and "test" paths,
// "noise_reference" (when `noise` is not empty), the "policy" and the run's
// "env" (EnvironmentToJson).
nlohmann::json CompareReportToJson(const SetComparison& s, const std::string& reference, const std::string& test,
                                   const std::string& noise, const TolerancePolicy& policy,
                                   const nlohmann::json& env);

}  // namespace parity
