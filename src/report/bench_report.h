// The writers of `parity bench`'s result (engine/bench/bench_result.h): JSON
// (schema parity.bench/1, documented in docs/bench.md) and the console tables.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/bench/bench_result.h"

namespace parity {

nlohmann::json BenchReportToJson(const BenchReport& report);
// The per-config table, then (when fusions were requested) the fusion table.
void PrintBenchReport(const BenchReport& report, std::FILE* out);

}  // namespace parity
