// `parity fix`'s report (engine/fix/fix.h): parity.fix/1 JSON
// (docs/fix.schema.json) and the console summary.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/fix/fix.h"

namespace parity {

nlohmann::json FixResultToJson(const FixResult& result);
void PrintFixSummary(const FixResult& result, std::FILE* out);

}  // namespace parity
