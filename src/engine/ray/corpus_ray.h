// The corpus check on Ray (docs/generation.md "A prompt corpus", `check
// --corpus DIR --engine ray`): the prompts are the entries of the Ray driver
// check --dataset uses (engine/ray/ray_driver.h), each actor running `parity
// corpus-worker` (engine/ray/corpus_worker.h), which opens the model once and
// answers each prompt's index with its row (RunCorpusPrompt, the local
// engine's own code: the same numbers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/generate/corpus_check.h"
#include "engine/ray/ray_driver.h"

namespace parity {

// The rows of prompts 0 .. prompts-1 of the corpus recorded in `corpus_dir`
// (an absolute path) for `model` under `target`, by index. Errors: the
// driver's Python not found (kInvalidArgument), the driver's (RunRayDriver),
// a row that does not parse, a prompt with no row or two.
Result<std::vector<CorpusPrompt>> RayCorpusRows(const RayEngineOptions& ray, const std::string& model,
                                                const std::string& corpus_dir, const RunConfig& target,
                                                int64_t prompts);

}  // namespace parity
