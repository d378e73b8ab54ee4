// JSON writer of the check report: schema parity.check/1, documented field by
// field in docs/report.md and validated by docs/report.schema.json.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/check/check_result.h"

namespace parity {

// The whole report as JSON. Never fails; non-finite numbers are written as
// "inf", "-inf", "nan" (JsonNumber). Serialize with ToJsonText
// (report/json_out.h), which tolerates invalid UTF-8 in names.
nlohmann::json CheckReportToJson(const CheckReport& report);

// The "metrics" summary alone: counts of outputs compared/failed/unchecked
// and the worst value of each headline metric with where it occurred.
nlohmann::json CheckMetricsSummary(const CheckReport& report);

nlohmann::json PerformanceToJson(const PerformanceResult& p);
nlohmann::json LayerErrorPointToJson(const LayerErrorPoint& p);

}  // namespace parity
