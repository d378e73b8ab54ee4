// The corpus check of an ORT GenAI package (issue 52 item 4,
// docs/generation.md "ORT GenAI packages"): a folder made by
// onnxruntime-genai's model builder (genai_config.json, model.onnx, the
// tokenizer) is run by the GenAI runtime's own loop (og.Model, og.Generator,
// under the package's genai_config.json: its session options and search)
// in a Python child, python/parity/_genai_driver.py, over a corpus record
// (corpus_record.h), and judged here as the step-model corpus check judges
// ORT (CompareCorpusStep):
// - teacher-forced: PyTorch's tokens appended to the generator; per step the
//   last position's logits against PyTorch's top-k and log-sum-exp (KL, top
//   token, rank);
// - free-running (when the package's search is greedy): the tokens the
//   runtime's own search picks, against PyTorch's; a prompt fails when they
//   part before teacher forcing does (the loop departs from its logits).
//
// Thread-compatible.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/generate/corpus_record.h"
#include "engine/generate/corpus_result.h"

namespace parity {

// The Python that runs the driver (engine/ray/driver_python.h finds it).
struct GenAiPython {
  std::string python;
  std::string pythonpath;  // prepended to sys.path when not empty (a checkout's python/)
};

// Checks a package folder before anything runs: genai_config.json is there
// and is a JSON object with model.decoder.filename naming a file in the
// folder. kInvalidArgument, one line naming the file and what is wrong.
Status CheckGenAiPackage(const std::filesystem::path& dir);

// Runs every prompt of `r` through the package's own loop and returns the
// prompts' rows (free_steps and free_divergent set when the search is
// greedy); `run` gets what it ran under. The driver refusing its input
// (onnxruntime-genai not importable or unable to load the package, exit 2)
// is kInvalidArgument with its last words; logits whose length is not the
// record's vocabulary too (the record is not this model's). `done(i, n)`
// after each prompt.
Result<std::vector<CorpusPrompt>> RunGenAiCorpus(const GenAiPython& py, const std::filesystem::path& package,
                                                 const CorpusRecord& r, GenAiRun& run,
                                                 const std::function<void(size_t, size_t)>& done = {});

// The free run's tokens against PyTorch's (the record's prompt p): sets
// free_steps and free_divergent, the first step whose token differs (a run
// that stops early is no divergence: its search ended, e.g. at an end token).
void JudgeFreeRun(const CorpusRecord& r, int64_t p, const std::vector<int64_t>& tokens, CorpusPrompt& row);

}  // namespace parity
