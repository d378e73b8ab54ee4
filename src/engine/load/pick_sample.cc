#include "engine/load/pick_sample.h"

#include <fmt/format.h>

#include "engine/inputs/sample_gen.h"
#include "engine/load/samples.h"

namespace parity {

Result<PickedSample> PickOneSample(const Model& model, const PickSampleOptions& o) {
  if (o.inputs.empty()) {
    SampleGenOptions gen{.kinds = {SampleKind::kTypical}, .seed = o.seed};
    PARITY_ASSIGN_OR_RETURN(auto samples, WithContext(GenerateSamples(model, gen), o.model_label));
    if (samples.empty()) return InternalError("no typical sample generated");
    return PickedSample{.sample = std::move(samples.front()),
                        .note = fmt::format("no --inputs: using a seeded typical sample (seed {})", o.seed)};
  }
  PARITY_ASSIGN_OR_RETURN(auto samples,
                          LoadSamplesFor(model, o.inputs, {.model_label = o.model_label, .sample = o.sample}));
  PickedSample picked{.sample = std::move(samples.front())};
  if (samples.size() > 1)
    picked.note = fmt::format("{} samples in {}; using the first, '{}' (choose with --sample)", samples.size(),
                              o.inputs.string(), picked.sample.name);
  return picked;
}

}  // namespace parity
