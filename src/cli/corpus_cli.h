// check's corpus mode (docs/generation.md "A prompt corpus", issue 52):
// `check STEP.onnx --corpus DIR` (a record made by `python -m parity.torch
// corpus`) or `--prompts P.jsonl --torch-model MODULE:FACTORY` (the record
// made first, into a scratch folder), on the local engine or on Ray
// (`--engine ray`: the prompts sharded over actors, each running the hidden
// `parity corpus-worker` with one session for all its prompts:
// engine/ray/corpus_ray.h).
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/dataset_cli.h"
#include "core/run_config.h"
#include "engine/generate/corpus_result.h"

namespace parity::cli {

struct CorpusCmdOptions {
  std::string corpus;        // --corpus DIR
  std::string prompts;       // --prompts FILE (with --torch-model)
  std::string torch_model;   // --torch-model MODULE:FACTORY
  std::string output_names;  // --output-names (the recorder's)
  int generate = 32;         // --generate N
  int top_k = 64;            // --top-k K
  double kl_tolerance = -1;  // < 0: calibrated from the record, else the default
  bool Given() const { return !corpus.empty() || !prompts.empty() || !torch_model.empty(); }
};

void AddCorpusOptions(CLI::App* cmd, CorpusCmdOptions* o);

// Runs the corpus check of `model` under `target`, prints the summary,
// writes --report DIR and --json FILE; returns the exit code (0 pass, 1
// fail, 2 bad input, 3 runtime). `engine` holds --engine and --ray-*.
int RunCorpusCheck(const CorpusCmdOptions& o, const DatasetCmdOptions& engine, const std::string& model,
                   const RunConfig& target, const std::string& report_dir, const std::string& json);

// parity corpus-worker (hidden): a Ray actor's loop.
void RegisterCorpusWorker(CLI::App& app);

}  // namespace parity::cli
