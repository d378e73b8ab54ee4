// The JSON form of the machine and software a run happened on
// (engine/run/environment.h): the "env" of every report and of the baseline
// manifest, and `parity env --json` (parity.env/1).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/run/environment.h"

namespace parity {

nlohmann::json EnvironmentToJson(const Environment& env);

// `parity env --json`: {"schema": "parity.env/1", "env": EnvironmentToJson}.
nlohmann::json EnvReportToJson(const Environment& env);

}  // namespace parity
