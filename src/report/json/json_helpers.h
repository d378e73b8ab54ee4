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

// Every string and key of `j` with the long names this process remembered
// shortened (core/short_name.h ShortenLongNames): what a report file holds,
// so a report repeats a long name by its first bytes and a hash. Nothing is
// done when none is remembered.
void ShortenLongNamesIn(nlohmann::json& j);

}  // namespace parity
