// The name of a JSON value's type as a user reads it in an error message:
// "config key 'threads': expected an integer, got a string". Shared by every
// reader of parity's JSON inputs (run configs, tolerance policies, PyTorch
// dump manifests). Works for nlohmann::json and nlohmann::ordered_json.
#pragma once

#include <string_view>

namespace parity {

template <typename Json>
std::string_view JsonTypeName(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

}  // namespace parity
