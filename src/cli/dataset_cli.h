// check --dataset's pieces of the command line (docs/dataset.md): the
// options check adds, the command that runs them, and the hidden
// `parity dataset-worker` each Ray actor runs (the Ray engine itself:
// engine/ray/).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/dataset/dataset.h"
#include "engine/ray/ray_driver.h"

namespace parity::cli {

struct DatasetCmdOptions {
  std::string source;                // --dataset
  std::string on_bad_sample = "fail";  // --on-bad-sample skip|fail
  size_t locate = kDatasetLocateWorst;  // --dataset-locate K
  std::string engine = "local";      // --engine local|ray
  std::string ray_address;           // --ray-address; empty: a local cluster
  int ray_actors = 2;                // --ray-actors
  std::string ray_python;            // --ray-python; default $PARITY_PYTHON, else python3
  std::string reference_outputs;     // --reference-outputs DIR: stored reference outputs per entry
  RayEngineOptions Ray() const { return {.address = ray_address, .actors = ray_actors, .python = ray_python}; }
};

// Adds --dataset, --on-bad-sample, --dataset-locate, --engine, --ray-* to check.
void AddDatasetOptions(CLI::App* cmd, DatasetCmdOptions* o);

// check MODEL --dataset SRC: runs, prints the summary, writes --report DIR /
// --json FILE and --model-explorer DIR (cli/model_explorer_option.h); returns
// the exit code (0 pass, 1 fail, 2 bad input, 3 runtime).
int RunDatasetCheck(const DatasetCmdOptions& o, DatasetOptions options, const std::string& report_dir,
                    const std::string& json, const std::string& model_explorer = "");

// parity dataset-worker (hidden): a Ray actor's evaluator.
void RegisterDatasetWorker(CLI::App& app);

}  // namespace parity::cli
