// Writing what a command produces: JSON reports written whole (temp + rename).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace parity::cli {

// Writes `j` pretty-printed to `path` atomically; errors name the path.
Status WriteJsonReport(const std::string& path, const nlohmann::json& j);

}  // namespace parity::cli
