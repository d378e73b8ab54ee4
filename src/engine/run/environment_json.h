// The JSON form of the machine and software a run happened on
// (environment.h). It lives beside Environment, not in report/, because the
// engine's own data file needs it: the baseline manifest records it and
// `baseline verify` compares it field by field (engine/baseline/). Every
// report's "env" and `parity env --json` are this object too
// (report/json/env_json.h).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/run/environment.h"

namespace parity {

// {"parity_version", "ort_version", "onnx_version", "compiler", "providers",
// "cpu", "cpu_count", "os", "memory_bytes", "hostname", "ort_library", "ort_origin",
// "ep_libraries": [{"name", "path", "origin"}], "ep_devices": [{"ep_name",
// "ep_vendor", "device_type", "library", "capabilities"}], "ep_error" (only
// when a plugin library failed)}. Never fails.
nlohmann::json EnvironmentToJson(const Environment& env);

// {"version", "library", "origin"}: the "ort" object of the locate and bench
// reports (their "env" would register every plugin EP to list its devices).
nlohmann::json OrtToJson(const OrtFact& ort);

}  // namespace parity
