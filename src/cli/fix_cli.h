// `parity fix` (cmd_fix.cc): registered by main.
#pragma once

#include <CLI/CLI.hpp>

namespace parity::cli {

void RegisterFix(CLI::App& app);

}  // namespace parity::cli
