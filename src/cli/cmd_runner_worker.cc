// parity runner-worker (hidden): the child of an ORT runner that runs on
// another runtime library than its parent's (engine/runner/runner.h,
// MakeOrtRunner). It loads --ort-library, then serves the parent's jobs
// (engine/runner/runner_worker.h, in the one worker protocol: core/worker_protocol.h) until its
// stdin ends.
#include <iostream>

#include "cli/command.h"
#include "engine/runner/runner.h"
#include "engine/runner/runner_worker.h"

namespace parity::cli {
namespace {

struct RunnerWorkerOptions {
  std::string config;
  std::vector<std::string> ep_libraries;
  std::string ort_library;
};

int RunRunnerWorker(const RunnerWorkerOptions& o) {
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  auto config = LoadRunConfig(o.config);  // written by the parent
  if (!config) return ReportError(config.error());
  auto runner = MakeSessionRunner(*config);
  std::string error;
  const int rc = ServeRunnerJobs(std::cin, std::cout, *runner, &error);
  if (rc != 0) return ReportError(InvalidArgument(error).error());
  return rc;
}

}  // namespace

void RegisterRunnerWorker(CLI::App& app) {
  auto o = std::make_shared<RunnerWorkerOptions>();
  auto* cmd = app.add_subcommand("runner-worker", "");  // hidden: an empty description leaves it out of --help
  cmd->group("");
  cmd->add_option("--config", o->config)->required();
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->callback([o] { ExitCode() = RunRunnerWorker(*o); });
}

}  // namespace parity::cli
