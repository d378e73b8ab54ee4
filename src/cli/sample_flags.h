// The sample option group shared by every command that makes its own samples
// (check, locate, baseline, bench, inputs): --shape, --dim, --range, --role,
// --min-size, --max-input-elements, --max-generated-mib
// (engine/inputs/sample_gen.h says what each does).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "engine/inputs/sample_gen.h"

namespace parity::cli {

struct SampleFlags {
  std::vector<std::string> shapes;
  std::vector<std::string> dims;
  std::vector<std::string> ranges;
  std::vector<std::string> roles;
  int64_t min_size = 1;
  int64_t max_input_elements = int64_t{1} << 20;  // SampleGenOptions' defaults
  int64_t max_generated_mib = 1024;
};

void AddSampleFlags(CLI::App* app, SampleFlags* flags);

// The flags into `gen` (its kinds and seed are left as they are).
Status ResolveSampleFlags(const SampleFlags& flags, SampleGenOptions& gen);
// The same, as a value or the error (engine/load/pick_sample.h reports it
// only when it generates a sample).
Result<SampleGenOptions> ResolvedSampleFlags(const SampleFlags& flags);

}  // namespace parity::cli
