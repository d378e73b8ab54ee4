// Checks on where a command will write (the writing itself: core/json_out.h).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace parity::cli {

// Checked before any work, so that a bad output path is not found only after
// minutes of runs: the path's nearest existing ancestor must be a writable
// directory, and the path itself, when it exists, must be a file (or, with
// `directory`, a directory). Empty paths pass (the option was not given).
// Invalid argument naming `option` and the path.
Status CheckOutputPath(const std::string& path, std::string_view option, bool directory = false);

}  // namespace parity::cli
