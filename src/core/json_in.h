// Parsing JSON parity does not trust (manifests, configs, tolerance files)
// with a bound on what the parse costs (docs/security.md "Limits"): a 64 MiB
// manifest of nested arrays cost 2.7 GB in nlohmann::json (issue 29, probe 8).
// A linear pre-scan, allocating nothing, counts nesting depth and values
// before any value is built.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace parity {

// Nesting of arrays and objects.
inline constexpr int kMaxJsonDepth = 128;
// The parse may cost at most kJsonBudgetFactor times the text's size, plus
// kJsonBudgetFloorBytes (estimated from the pre-scan: per container, member
// and value, what nlohmann::json allocates for it).
inline constexpr int64_t kJsonBudgetFactor = 8;
inline constexpr int64_t kJsonBudgetFloorBytes = int64_t{16} << 20;

// What the pre-scan finds; exposed for tests.
struct JsonCost {
  int max_depth = 0;
  int64_t estimated_bytes = 0;
};
JsonCost EstimateJsonCost(std::string_view text);

// kInvalidArgument naming `what` (a path) when `text` is nested deeper than
// kMaxJsonDepth or its estimated cost is above the budget.
Status CheckJsonBudget(std::string_view text, const std::string& what);

// CheckJsonBudget, then parses `text`; kInvalidArgument also for text that is
// not valid JSON (with the parser's line and column).
Result<nlohmann::json> ParseJsonBounded(std::string_view text, const std::string& what);
Result<nlohmann::ordered_json> ParseOrderedJsonBounded(std::string_view text, const std::string& what);

}  // namespace parity
