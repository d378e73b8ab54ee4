// The JSON forms of the baseline commands' results (engine/baseline/baseline.h):
// `parity baseline --json` (parity.baseline_report/1) and `parity baseline
// verify --json` (parity.baseline_verify/1), documented in docs/baseline.md.
// The baseline's own manifest.json is a data file the engine writes and reads
// back; it stays in engine/baseline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/baseline/baseline.h"

namespace parity {

// The manifest as written, with "schema": "parity.baseline_report/1",
// "overall_status" ("PASS" when every sample was deterministic) and
// "manifest": the manifest's path.
nlohmann::json BaselineReportToJson(const BaselineResult& r, const std::string& manifest_path);

// `env`: the environment of the verifying run (EnvironmentToJson).
nlohmann::json VerifyResultToJson(const VerifyResult& r, const nlohmann::json& env);

}  // namespace parity
