// The writers of `parity locate`'s result (engine/locate/locate_result.h):
// JSON (schema parity.locate/1, documented in docs/locate.md and
// docs/contract.md ("The locate report")) and a console summary. Nothing here
// knows ONNX or ORT: the engine fills the struct, these functions only format it.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/locate/locate_result.h"

namespace parity {

nlohmann::json LocateReportToJson(const LocateReport& report);
// A few lines: observation, first divergence, culprits table.
void PrintLocateSummary(const LocateReport& report, std::FILE* out);

}  // namespace parity
