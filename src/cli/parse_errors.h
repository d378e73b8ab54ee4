// Readable command-line errors: CLI11 reports a typo in a subcommand as "A
// subcommand is required" and an unknown option with its value as "The
// following arguments were not expected: r --report-dir". This rewrites such
// errors into one line that names the command, the offending word, and the
// closest valid name ("did you mean"). CLI11 2.1 has no suggestion feature of
// its own, so the closest name is found with a plain edit distance
// (engine/inputs/input_check.h's ClosestName, shared with input-name suggestions).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace parity::cli {

// The message for `e` raised while parsing argv into `app` (without the
// "parity: error: " prefix). Falls back to CLI11's own text.
std::string ExplainParseError(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

}  // namespace parity::cli
