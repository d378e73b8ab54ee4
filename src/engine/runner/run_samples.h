// `parity run`: every sample of a model through one Runner (one session kept
// for them all), the outputs (or every tensor) collected, the samples ORT
// refuses named. A sample ORT refuses costs that sample, not the others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/runner/runner.h"
#include "onnx/model.h"

namespace parity {

struct SamplesRun {
  std::vector<Sample> results;       // the samples that ran: their outputs (or every tensor)
  std::vector<std::string> refused;  // the samples ORT refused, in order
  std::optional<Error> first_error;  // the first refusal
  RanWhat ran;                       // the runtime that ran them
};

// Runs `samples` on `model` under `config` (on config.ort_library's ORT, in a
// child process when that is not the process's). all_tensors: every
// intermediate tensor is returned too. Errors: a session ORT cannot create
// (a model the ONNX checker refuses too, or of an IR version this ORT does
// not know, is kInvalidArgument: the user's mistake), a runtime library that
// cannot be loaded; every sample refused is the first refusal.
Result<SamplesRun> RunEverySample(const Model& model, const std::vector<Sample>& samples, const RunConfig& config,
                                  const std::string& label, bool all_tensors);

}  // namespace parity
