// Writing what a command produces: JSON reports written whole (temp + rename).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace parity::cli {

// Checked before any work, so that a bad output path is not found only after
// minutes of runs: the path's nearest existing ancestor must be a writable
// directory, and the path itself, when it exists, must be a file (or, with
// `directory`, a directory). Empty paths pass (the option was not given).
// Invalid argument naming `option` and the path.
Status CheckOutputPath(const std::string& path, std::string_view option, bool directory = false);

// Writes `j` pretty-printed to `path` atomically; errors name the path.
Status WriteJsonReport(const std::string& path, const nlohmann::json& j);

}  // namespace parity::cli
