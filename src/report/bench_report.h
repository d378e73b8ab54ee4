// The JSON form of `parity bench`'s result (engine/bench/bench_result.h):
// schema parity.bench/1, documented in docs/bench.md.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/bench/bench_result.h"

namespace parity {

nlohmann::json BenchReportToJson(const BenchReport& report);

}  // namespace parity
