// JSON writer of the check report: schema parity.check/1, documented field by
// field in docs/report.md and validated by docs/report.schema.json.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/check/check_result.h"

namespace parity {

// The whole report as JSON. Never fails; non-finite numbers are written as
// "inf", "-inf", "nan" (JsonNumber). Serialize with ToJsonText
// (core/json_out.h), which tolerates invalid UTF-8 in names.
nlohmann::json CheckReportToJson(const CheckReport& report);

// The "metrics" summary alone: counts of outputs compared/failed/unchecked
// and the worst value of each headline metric with where it occurred.
nlohmann::json CheckMetricsSummary(const CheckReport& report);

// The report's "model": the model's facts (ModelInfoToJson), "path",
// "sha256" (null when the file could not be read) and "reference_model"
// (with --reference-model only). Without a model, those five keys null.
nlohmann::json CheckModelToJson(const CheckReport& report);
// The report's "config": "reference", "target", "tolerance", "samples",
// "seed" and "torch" (with --torch only); {} without a config.
nlohmann::json CheckConfigToJson(const CheckReport& report);
// The report's "env" (EnvironmentToJson); {} without one.
nlohmann::json CheckEnvToJson(const CheckReport& report);

nlohmann::json PerformanceToJson(const PerformanceResult& p);
nlohmann::json LayerErrorPointToJson(const LayerErrorPoint& p);

}  // namespace parity
