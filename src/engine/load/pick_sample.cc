#include "engine/load/pick_sample.h"

#include <fmt/format.h>

#include <utility>

#include "engine/load/samples.h"

namespace parity {

Result<Sample> PickSample(const Model& model, const SamplePick& pick, const NoteSink& note) {
  if (pick.inputs.empty()) {
    if (note) note(fmt::format("no --inputs: using the generated typical sample (seed {}; docs/inputs.md)", pick.seed));
    if (!pick.gen) return Result<Sample>(std::unexpected(pick.gen.error()));
    SampleGenOptions gen = *pick.gen;
    gen.seed = static_cast<uint64_t>(pick.seed);
    return WithContext(GenerateTypicalSample(model, gen), pick.model_label);
  }
  // The same loader as every other command (engine/load/samples.h).
  PARITY_ASSIGN_OR_RETURN(auto samples,
                          LoadSamplesFor(model, pick.inputs, {.model_label = pick.model_label, .sample = pick.sample}));
  if (samples.size() > 1 && note)
    note(fmt::format("{} samples in {}; locating with the first, '{}' (choose with --sample)", samples.size(),
                     pick.inputs, samples.front().name));
  return std::move(samples.front());
}

}  // namespace parity
