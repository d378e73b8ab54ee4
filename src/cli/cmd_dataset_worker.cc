// parity dataset-worker MODEL (hidden): the evaluator of one Ray actor
// (python/parity/_ray_engine.py, docs/dataset.md), served by
// engine/ray/dataset_worker.h (the protocol is there). Its errors are one
// line and the exit code of their class, as every command's.
#include <iostream>

#include "cli/command.h"
#include "cli/dataset_cli.h"
#include "engine/ray/dataset_worker.h"

namespace parity::cli {
namespace {

struct WorkerOptions {
  DatasetWorkerOptions serve;
  std::vector<std::string> ep_libraries;  // the driver's: the same ORT and EPs in every actor
  std::string ort_library;
};

int RunWorker(const WorkerOptions& o) {
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  if (auto s = ServeDatasetWorker(o.serve, std::cin, std::cout); !s) return ReportError(s.error());
  return 0;
}

}  // namespace

void RegisterDatasetWorker(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("dataset-worker", "");  // hidden: an empty description leaves it out of --help
  cmd->group("");
  cmd->add_option("model", o->serve.model)->required();
  cmd->add_option("--reference-model", o->serve.reference_model);
  cmd->add_option("--target-config", o->serve.target_config)->required();
  cmd->add_option("--reference-config", o->serve.reference_config)->required();
  cmd->add_option("--tolerance-policy", o->serve.tolerance)->required();
  cmd->add_option("--threads", o->serve.threads);
  cmd->add_option("--reference-outputs", o->serve.reference_outputs);
  cmd->add_flag("--allow-symlinks", o->serve.allow_symlinks);
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->callback([o] { ExitCode() = RunWorker(*o); });
}

}  // namespace parity::cli
