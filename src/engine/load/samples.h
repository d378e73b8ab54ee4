// The sample loader of every command (run, bench, locate, check, baseline):
// a tensor file bound to a model's inputs and checked against its signature
// before any session exists, so a wrong name, dtype or shape is the user's
// mistake (exit 2) and is worded the same whichever command read the file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/inspect.h"
#include "onnx/model.h"

namespace parity {

struct SampleLoadOptions {
  // Names the model in errors; empty: the model's path.
  std::string model_label;
  // Keep only the sample of this name (--sample); empty: every sample.
  std::string sample;
  // Symlinks below a folder of samples (TensorSourceOptions).
  bool allow_symlinks = false;
  std::string symlink_hint;
};

// Inspects `model`, reads `path` (every kind tensor_source.h accepts), binds
// unnamed tensors to the model's inputs (input_check.h's rule) and checks
// every sample with CheckInputs. A model without inputs (a Constant, a
// generator) accepts a file without tensors: it runs once on nothing, as the
// one sample "default".
// Returns the samples in file order (at least one).
// Errors, each naming `path`:
//   the file cannot be read or parsed (LoadSamples' error);
//   kInvalidArgument "PATH: no tensors" when it holds none and the model has inputs;
//   kInvalidArgument from CheckInputs (a missing or extra input, a dtype or shape);
//   kNotFound "PATH: no sample named 'X' (samples: a, b)" for options.sample.
Result<std::vector<Sample>> LoadSamplesFor(const Model& model, const std::filesystem::path& path,
                                           const SampleLoadOptions& options = {});

// The same with the model already inspected (check --dataset reads thousands
// of files against one model): `info` is Inspect(model); options.model_label
// names the model in errors.
Result<std::vector<Sample>> LoadSamplesFor(const ModelInfo& info, const std::filesystem::path& path,
                                           const SampleLoadOptions& options);

}  // namespace parity
