// JSON and command-line forms of a TolerancePolicy (see tolerance.h).
#include <fmt/format.h>

#include <charconv>
#include <set>

#include "compare/tolerance.h"

namespace parity {
namespace {

Result<double> NonNegative(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number()) return InvalidArgument(fmt::format("'{}' must be a number, got {}", key, v.type_name()));
  const double d = v.get<double>();
  if (!(d >= 0)) return InvalidArgument(fmt::format("'{}' must be >= 0, got {}", key, d));
  return d;
}

Result<std::string> String(const nlohmann::json& v, const std::string& key) {
  if (!v.is_string()) return InvalidArgument(fmt::format("'{}' must be a string, got {}", key, v.type_name()));
  return v.get<std::string>();
}

// Reads the rule fields of object `o` into r; `extra` are other allowed keys.
Status ReadRule(const nlohmann::json& o, ToleranceRule& r, const std::set<std::string>& extra,
                const std::string& where) {
  if (!o.is_object()) return InvalidArgument(fmt::format("{} must be an object, got {}", where, o.type_name()));
  for (const auto& [key, v] : o.items()) {
    const std::string path = where.empty() ? key : where + "." + key;
    if (key == "atol" || key == "rtol" || key == "quantile" || key == "reference_fraction") {
      PARITY_ASSIGN_OR_RETURN(double d, NonNegative(v, path));
      if (key == "quantile" && d > 1) return InvalidArgument(fmt::format("'{}' must be in [0, 1], got {}", path, d));
      (key == "atol" ? r.atol : key == "rtol" ? r.rtol : key == "quantile" ? r.quantile : r.reference_fraction) = d;
    } else if (key == "decide_by") {
      PARITY_ASSIGN_OR_RETURN(std::string s, String(v, path));
      PARITY_ASSIGN_OR_RETURN(r.decide_by, WithContext(StatisticFromName(s), path));
    } else if (key == "mode") {
      PARITY_ASSIGN_OR_RETURN(std::string s, String(v, path));
      PARITY_ASSIGN_OR_RETURN(r.mode, WithContext(ToleranceModeFromName(s), path));
    } else if (!extra.contains(key)) {
      return InvalidArgument(fmt::format("unknown key '{}'", path));
    }
  }
  return {};
}

void WriteRule(nlohmann::json& o, const ToleranceRule& r) {
  if (r.atol) o["atol"] = *r.atol;
  if (r.rtol) o["rtol"] = *r.rtol;
  if (r.quantile) o["quantile"] = *r.quantile;
  if (r.decide_by) o["decide_by"] = StatisticName(*r.decide_by);
  if (r.mode) o["mode"] = ToleranceModeName(*r.mode);
  if (r.reference_fraction) o["reference_fraction"] = *r.reference_fraction;
}

}  // namespace

Result<TolerancePolicy> TolerancePolicyFromJson(const nlohmann::json& j) {
  TolerancePolicy p;
  PARITY_RETURN_IF_ERROR(
      ReadRule(j, p.global, {"calibration_multiplier", "quantized", "outputs"}, "tolerance policy"));
  if (p.global.mode) p.mode = *p.global.mode, p.global.mode.reset();
  if (j.contains("calibration_multiplier")) {
    PARITY_ASSIGN_OR_RETURN(p.calibration_multiplier, NonNegative(j["calibration_multiplier"], "calibration_multiplier"));
  }
  if (j.contains("quantized")) {
    if (!j["quantized"].is_boolean()) return InvalidArgument("'quantized' must be a boolean");
    p.quantized = j["quantized"].get<bool>();
  }
  if (j.contains("outputs")) {
    const auto& outs = j["outputs"];
    if (!outs.is_array()) return InvalidArgument(fmt::format("'outputs' must be an array, got {}", outs.type_name()));
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string where = fmt::format("outputs[{}]", i);
      ToleranceRule r;
      PARITY_RETURN_IF_ERROR(ReadRule(outs[i], r, {"match"}, where));
      if (!outs[i].contains("match")) return InvalidArgument(fmt::format("'{}.match' is required", where));
      PARITY_ASSIGN_OR_RETURN(r.pattern, String(outs[i]["match"], where + ".match"));
      p.rules.push_back(std::move(r));
    }
  }
  return p;
}

nlohmann::json TolerancePolicyToJson(const TolerancePolicy& p) {
  nlohmann::json j = nlohmann::json::object();
  WriteRule(j, p.global);
  j["mode"] = ToleranceModeName(p.mode);
  j["calibration_multiplier"] = p.calibration_multiplier;
  j["quantized"] = p.quantized;
  nlohmann::json outs = nlohmann::json::array();
  for (const ToleranceRule& r : p.rules) {
    nlohmann::json o = {{"match", r.pattern}};
    WriteRule(o, r);
    outs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outs);
  return j;
}

Result<ToleranceRule> ParseToleranceRule(std::string_view spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument(fmt::format("tolerance rule '{}' is not PATTERN:key=value,...", spec));
  }
  ToleranceRule r;
  r.pattern = std::string(spec.substr(0, colon));
  std::string_view rest = spec.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return InvalidArgument(fmt::format("'{}' in '{}' is not key=value", item, spec));
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "by") {
      PARITY_ASSIGN_OR_RETURN(r.decide_by, StatisticFromName(value));
    } else if (key == "mode") {
      PARITY_ASSIGN_OR_RETURN(r.mode, ToleranceModeFromName(value));
    } else if (key == "atol" || key == "rtol" || key == "q" || key == "cap") {
      double d = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (ec != std::errc() || end != value.data() + value.size() || !(d >= 0)) {
        return InvalidArgument(fmt::format("'{}' in '{}' needs a number >= 0", key, spec));
      }
      (key == "atol" ? r.atol : key == "rtol" ? r.rtol : key == "q" ? r.quantile : r.reference_fraction) = d;
    } else {
      return InvalidArgument(fmt::format("unknown key '{}' in '{}' (atol, rtol, by, q, mode, cap)", key, spec));
    }
  }
  return r;
}

}  // namespace parity
