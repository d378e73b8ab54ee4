// The one sample a single-sample command (locate, bench) runs on: the first
// (or --sample) of --inputs, else the generated typical sample
// (sample_gen.h). One function for both commands (issue 55: the CLI only
// parses and wires).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/inputs/sample_gen.h"
#include "onnx/model.h"

namespace parity {

struct SamplePick {
  std::string inputs;       // --inputs (empty: generate)
  std::string sample;       // --sample (empty: the first)
  std::string model_label;  // the model as the user named it (errors, notes)
  int64_t seed = 0;         // --seed of the generated sample
  // The generator's options as the CLI resolved them from its sample flags,
  // or the error it found in them: reported only when a sample is generated
  // (a bad --shape beside --inputs is not read).
  Result<SampleGenOptions> gen = SampleGenOptions{};
};

// A note for the user ("no --inputs: using the generated typical sample
// (seed 0; docs/inputs.md)"), without the "parity: " prefix.
using NoteSink = std::function<void(std::string_view)>;

// Errors: LoadSamplesFor's (a file that does not fit the model, an unknown
// --sample), the sample flags' error, GenerateTypicalSample's. `note`
// (optional) hears which sample was chosen when the user did not say.
Result<Sample> PickSample(const Model& model, const SamplePick& pick, const NoteSink& note = {});

}  // namespace parity
