// The JSON form of the machine and software a run happened on
// (engine/run/environment.h): `parity env --json` (parity.env/1). The "env"
// object itself, in every report and the baseline manifest, is
// EnvironmentToJson (engine/run/environment_json.h).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/run/environment.h"
#include "engine/run/environment_json.h"

namespace parity {

// `parity env --json`: {"schema": "parity.env/1", "env": EnvironmentToJson}.
nlohmann::json EnvReportToJson(const Environment& env);

}  // namespace parity
