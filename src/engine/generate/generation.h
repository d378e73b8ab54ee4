// The generation check (issue 42, docs/generation.md): PyTorch's greedy
// decode recorded in a dump (generation_record.h) replayed on ONNX Runtime
// at the deployed config (decode_loop.h), step by step: tokens, the last
// position's logits against the tolerance (calibrated per step on the
// dump's float64 copy when it has one), the presents against PyTorch's, and
// the cache checks (a present starts with its past; the prompt at once
// equals the prompt one token at a time; an encoder's outputs).
//
// One ORT session alive at a time: the encoder's is released before the
// decoder's is made. Thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "engine/generate/generation_record.h"
#include "engine/generate/generation_result.h"
#include "engine/runner/step_session.h"
#include "engine/torch/torch_dump.h"

namespace parity {

struct GenerationOptions {
  std::string model_path;    // the decode step's .onnx
  std::string encoder_path;  // the encoder's .onnx; empty: the steps get PyTorch's encoder outputs
  RunConfig config;          // the deployed config
  TolerancePolicy policy;
  // When given: the inputs fed to each decode step after the prefill that
  // was judged against PyTorch (at most `keep_steps`), "generation:stepK".
  std::vector<std::pair<std::string, TensorSet>>* judged_steps = nullptr;
  size_t keep_steps = 1;
  // How the step's caches are served (step_session.h): auto, fresh, bound
  // (IO binding) or shared (past and present one buffer, written in place).
  CacheForm cache_form = CacheForm::kAuto;
};

// At most this many steps are listed in a result (and its reports): the
// first half, the last, and the first step that departs.
inline constexpr size_t kMaxListedGenerationSteps = 1024;

// Runs the loop and judges it. A model ORT cannot load or run is a failed
// check "run" (ORT's message with the step) in the result, its verdict FAIL.
// Errors (bad input: the record is checked before and while it is used): a
// dump file the record names that cannot be read or whose shape is not the
// record's or the model's, a record whose names the model lacks or whose
// prompt is not the dump's (kInvalidArgument, one line naming the field).
Result<GenerationResult> RunGeneration(const TorchDump& dump, const GenerationRecord& record,
                                       const GenerationOptions& options);

}  // namespace parity
