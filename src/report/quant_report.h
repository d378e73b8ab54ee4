// The writers of the per-layer precision report of a derived model
// (engine/quant/quant_result.h; docs/quantized.md): the `quant` object of
// parity.locate/1 and parity.check/1, and its console table.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/quant/quant_result.h"

namespace parity {

nlohmann::json QuantReportToJson(const QuantReport& report);
nlohmann::json QuantLayerToJson(const QuantLayer& layer);
// The table: one row per layer (SQNR, steps, local and inherited), the worst
// local loss named below it, then the unmatched layers.
void PrintQuantTable(const QuantReport& report, std::FILE* out, size_t max_rows = 0);

}  // namespace parity
