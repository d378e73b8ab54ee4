#include "cli/sample_flags.h"

#include <fmt/format.h>

namespace parity::cli {

void AddSampleFlags(CLI::App* app, SampleFlags* flags) {
  app->add_option("--shape", flags->shapes,
                  "a generated input's shape NAME:1x3xHxW (numbers fix a dim, letters name a dynamic one); "
                  "repeatable");
  app->add_option("--dim", flags->dims, "a dynamic dim's size in generated samples SYMBOL=N (e.g. batch=4); repeatable");
  app->add_option("--range", flags->ranges, "an input's typical values uniform in [LO, HI): NAME:LO,HI; repeatable");
  app->add_option("--role", flags->roles,
                  "what an input means, for its generated values NAME=ids|mask|positions|cache|count|image|other "
                  "(default: inferred, docs/inputs.md); repeatable");
  app->add_option("--min-size", flags->min_size, "the size boundary_min_size gives dynamic non-batch dims (default 1)");
  app->add_option("--max-input-elements", flags->max_input_elements,
                  "generated samples: defaulted dynamic dims are made smaller until each input holds at most N "
                  "elements (default 1048576)");
  app->add_option("--max-generated-mib", flags->max_generated_mib,
                  "generated samples: ... and each sample at most N MiB; a sample whose fixed dims hold more is "
                  "refused (default 1024)");
}

Status ResolveSampleFlags(const SampleFlags& flags, SampleGenOptions& gen) {
  if (flags.min_size < 0) return InvalidArgument("--min-size must be >= 0");
  gen.min_size = flags.min_size;
  if (flags.max_input_elements < 1) return InvalidArgument("--max-input-elements must be >= 1");
  if (flags.max_generated_mib < 1 || flags.max_generated_mib > (int64_t{1} << 40))
    return InvalidArgument("--max-generated-mib must be in [1, 2^40]");
  gen.max_input_elements = flags.max_input_elements;
  gen.max_sample_bytes = flags.max_generated_mib << 20;
  for (const auto& text : flags.shapes) {
    PARITY_ASSIGN_OR_RETURN(auto shape, ParseShapeOverride(text));
    if (!gen.shapes.emplace(shape.first, shape.second).second)
      return InvalidArgument(fmt::format("--shape given twice for '{}'", shape.first));
  }
  for (const auto& text : flags.dims) {
    PARITY_ASSIGN_OR_RETURN(auto dim, ParseDimOverride(text));
    gen.dims[dim.first] = dim.second;
  }
  for (const auto& text : flags.ranges) {
    PARITY_ASSIGN_OR_RETURN(auto range, ParseRangeOverride(text));
    gen.ranges[range.first] = range.second;
  }
  for (const auto& text : flags.roles) {
    PARITY_ASSIGN_OR_RETURN(auto role, ParseRoleOverride(text));
    if (!gen.roles.emplace(role.first, role.second).second)
      return InvalidArgument(fmt::format("--role given twice for '{}'", role.first));
  }
  return {};
}

Result<SampleGenOptions> ResolvedSampleFlags(const SampleFlags& flags) {
  SampleGenOptions gen;
  PARITY_RETURN_IF_ERROR(ResolveSampleFlags(flags, gen));
  return gen;
}

}  // namespace parity::cli
