// Checks on where a command will write (the writing itself: core/json_out.h).
#pragma once

#include <initializer_list>
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

// One output of a command: the option that names it and its path (empty:
// not given).
struct NamedOutput {
  std::string_view option;
  const std::string& path;
};

// Every command that writes several outputs (check, check --dataset,
// locate, align, baseline, ...) calls this before anything runs: two of
// them that are the same path, or one inside another (a --json inside the
// --report folder, --model-explorer R/me beside --report R), would have the
// later write refuse or replace the earlier, found only after the run with
// half the outputs written (issue 56, class 9). Paths are compared absolute,
// lexically normal, their existing part with symlinks resolved. Invalid
// argument naming both options and paths; empty paths are skipped.
Status CheckOutputsApart(std::initializer_list<NamedOutput> outputs);

// An engine note (engine/load/pick_sample.h NoteSink) on stderr as
// "parity: LINE", when it arises.
void PrintNote(std::string_view line);

}  // namespace parity::cli
