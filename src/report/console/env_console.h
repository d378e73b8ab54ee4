// The console text of `parity env`: one line per fact. Its JSON is
// report/json/env_json.h.
#pragma once

#include <string>

#include "engine/run/environment.h"

namespace parity {

std::string FormatEnvironment(const Environment& e);

}  // namespace parity
