#include "core/openvino_properties.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/json_in.h"

namespace parity {
namespace {

bool PrintableText(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::string Shown(std::string_view s) { return PrintableText(s) && s.size() <= 64 ? std::string(s) : "(unprintable)"; }

}  // namespace

Status CheckStoredLoadConfig(std::string_view value) {
  constexpr std::string_view kWhere = "openvino option 'load_config' in a stored config";
  auto parsed = ParseJsonBounded(value, "load_config");
  if (!parsed || !parsed->is_object())
    return InvalidArgument(fmt::format("{}: not a JSON object of devices", kWhere));
  for (const auto& [device, properties] : parsed->items()) {
    if (device.empty() || !PrintableText(device) || device.find('/') != std::string::npos || !properties.is_object())
      return InvalidArgument(fmt::format("{}: device '{}' is not a device name with an object of properties", kWhere,
                                         Shown(device)));
    for (const auto& [key, v] : properties.items()) {
      const bool allowed = std::find(std::begin(kStoredOpenVinoProperties), std::end(kStoredOpenVinoProperties),
                                     key) != std::end(kStoredOpenVinoProperties);
      const bool scalar = v.is_boolean() || v.is_number() || (v.is_string() && PrintableText(v.get<std::string>()));
      if (!allowed || !scalar)
        return InvalidArgument(fmt::format(
            "{}: property {}.{} is not allowed there; only properties that cannot name a file are "
            "(docs/security.md); pass it with --provider-option if you mean it",
            kWhere, Shown(device), Shown(key)));
    }
  }
  return {};
}

}  // namespace parity
