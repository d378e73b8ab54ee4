// parity's entry point: registers the subcommands and maps errors to exit
// codes. All logic lives in the library; see command.h. Any exception that
// escapes becomes "parity: internal error ..." and exit 3, never a signal
// (docs/security.md).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/corpus_cli.h"
#include "cli/dataset_cli.h"
#include "cli/fix_cli.h"
#include "cli/parse_errors.h"
#include "cli/signals.h"
#include "cli/terminal_guard.h"
#include "core/build_info.h"
#include "core/input_files.h"
#include "report/text_escape.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"parity: does the exported ONNX model compute what the PyTorch model computes, "
               "under the ONNX Runtime configuration it will be deployed with?"};
  app.set_version_flag("--version", std::string("parity ") + PARITY_VERSION);
  app.require_subcommand(1);
  parity::cli::RegisterEnv(app);
  parity::cli::RegisterInspect(app);
  parity::cli::RegisterInputs(app);
  parity::cli::RegisterRun(app);
  parity::cli::RegisterBaseline(app);
  parity::cli::RegisterAlign(app);
  parity::cli::RegisterLocate(app);
  parity::cli::RegisterCompare(app);
  parity::cli::RegisterCheck(app);
  parity::cli::RegisterFix(app);
  parity::cli::RegisterDatasetWorker(app);
  parity::cli::RegisterCorpusWorker(app);
  parity::cli::RegisterRunnerWorker(app);
  parity::cli::RegisterBench(app);
  parity::cli::RegisterDemo(app);
  parity::cli::RegisterView(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string message = parity::cli::ExplainParseError(app, e, argc, argv);
    std::fprintf(stderr, "parity: error: %s\n", parity::TerminalSafe(message).c_str());
    return 2;
  }
  return parity::cli::ExitCode();
}

}  // namespace

int main(int argc, char** argv) {
  parity::cli::FilterStdout();
  parity::cli::InstallTerminateHandler();
  parity::cli::InstallSignalHandlers();
  // Every file the command reads is one it will not write (core/input_files.h).
  const parity::InputTracking inputs;
  int code = 3;
  try {
    code = Main(argc, argv);
  } catch (const std::exception& e) {
    code = parity::cli::ReportInternalError(&e);
  } catch (...) {
    code = parity::cli::ReportInternalError(nullptr);
  }
  std::fflush(stdout);
  return code;
}
