// Small helpers every JSON writer in report/ shares. JSON has no non-finite
// numbers, so parity writes them as the strings "inf", "-inf" and "nan"
// (docs/compare.md); an absent text is null, never "".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace parity {

// A finite double as a number; a non-finite one as "inf"/"-inf"/"nan".
nlohmann::json JsonNumber(double v);

// `s` as a JSON string, or null when it is empty.
nlohmann::json JsonStringOrNull(const std::string& s);

}  // namespace parity
