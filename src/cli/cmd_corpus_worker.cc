// parity corpus-worker MODEL --corpus DIR (hidden): the loop of one Ray actor
// of the corpus check (`check --corpus DIR --engine ray`), served by
// engine/ray/corpus_worker.h (the protocol is there). Its errors are one line
// and the exit code of their class, as every command's.
#include <iostream>

#include "cli/command.h"
#include "cli/corpus_cli.h"
#include "engine/ray/corpus_worker.h"

namespace parity::cli {
namespace {

struct WorkerOptions {
  CorpusWorkerOptions serve;
  std::vector<std::string> ep_libraries;
  std::string ort_library;
};

int RunWorker(const WorkerOptions& o) {
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  if (auto s = ServeCorpusWorker(o.serve, std::cin, std::cout); !s) return ReportError(s.error());
  return 0;
}

}  // namespace

void RegisterCorpusWorker(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("corpus-worker", "");  // hidden
  cmd->group("");
  cmd->add_option("model", o->serve.model)->required();
  cmd->add_option("--corpus", o->serve.corpus)->required();
  cmd->add_option("--target-config", o->serve.target_config)->required();
  cmd->add_option("--threads", o->serve.threads);
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->callback([o] { ExitCode() = RunWorker(*o); });
}

}  // namespace parity::cli
