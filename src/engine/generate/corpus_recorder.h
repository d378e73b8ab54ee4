// A prompt corpus recorded from PyTorch (docs/generation.md "A prompt
// corpus"): `check --prompts P.jsonl --torch-model MODULE:FACTORY` runs
// `PY -m parity.torch corpus` (python/parity/torch/) into a folder first,
// then checks the model against that record (corpus_record.h).
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"

namespace parity {

struct TorchCorpusRequest {
  std::string python;        // the package's Python (engine/ray/driver_python.h finds it)
  std::string pythonpath;    // prefixed to PYTHONPATH when not empty (a checkout's python/)
  std::string torch_model;   // MODULE:FACTORY of the step model
  std::string prompts;       // one JSON object a line
  int generate = 32;         // steps a prompt
  int top_k = 64;            // logits kept a step
  std::string output_names;  // the step model's output names; "" for the recorder's default
};

// Runs the recorder into `dir` and waits for it (its output read and
// dropped; 60 s at most once its output ends). Errors carry the recorder's
// last words: its exit 2 (a bad factory or prompt file) is kInvalidArgument,
// any other failure kRuntime; a recorder that cannot start, the child
// process's error.
Status RecordTorchCorpus(const TorchCorpusRequest& r, const std::filesystem::path& dir);

}  // namespace parity
