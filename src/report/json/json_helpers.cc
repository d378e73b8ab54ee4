#include "report/json/json_helpers.h"

#include <cmath>

#include "core/short_name.h"

namespace parity {

nlohmann::json JsonNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json JsonStringOrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

void ShortenLongNamesIn(nlohmann::json& j) {
  if (LongestRememberedName() == 0) return;
  if (j.is_string()) {
    j = ShortenLongNames(j.get_ref<const std::string&>());
  } else if (j.is_array()) {
    for (auto& v : j) ShortenLongNamesIn(v);
  } else if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [key, v] : j.items()) {
      ShortenLongNamesIn(v);
      out[ShortenLongNames(key)] = std::move(v);
    }
    j = std::move(out);
  }
}

}  // namespace parity
