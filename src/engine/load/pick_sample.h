// The one sample of a command that runs one (locate, bench, and locate on two
// runtimes): the --inputs file's, or without one a seeded typical sample from
// the model's signature (engine/inputs/sample_gen.h: floats N(0,1), ids in
// their vocabulary, default dims). One function, so every such command picks
// the same sample from the same arguments.
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"

namespace parity {

struct PickSampleOptions {
  std::filesystem::path inputs;  // empty: generated
  std::string sample;            // --sample: which of the file's (empty: the first)
  std::string model_label;       // names the model in errors
  uint64_t seed = 0;             // of the generated sample
};

struct PickedSample {
  Sample sample;
  // What the user should be told on stderr (empty: nothing): a generated
  // sample, or the first of several taken.
  std::string note;
};

// Errors: LoadSamplesFor's (engine/load/samples.h), or GenerateSamples'
// for a signature it cannot fill, with the model's label.
Result<PickedSample> PickOneSample(const Model& model, const PickSampleOptions& options);

}  // namespace parity
