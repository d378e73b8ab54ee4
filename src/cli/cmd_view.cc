// parity view DIR: Model Explorer on 127.0.0.1 with the original and ORT's
// optimized graph side by side, parity's overlays loaded, opened at the first
// divergent node (issue 53 item 3; docs/model-explorer.md "parity view").
// The work is python/parity/view.py's (Model Explorer is a Python package):
// this command finds the Python of parity's package (engine/ray/driver_python.h) and
// hands the process over to it.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "core/child_process.h"
#include "engine/ray/driver_python.h"

namespace parity::cli {
namespace {

struct ViewOptions {
  std::string dir;
  int port = 0;
  bool no_browser = false;
  bool print_url = false;
};

int RunView(const ViewOptions& o) {
  auto py = FindDriverPython("");
  if (!py) {
    fmt::print(stderr, "parity: error: view: no Python to run Model Explorer: {}\n", py.error().message());
    return 2;
  }
  // A Python that cannot import parity (PARITY_PYTHON pointing elsewhere)
  // says so in one line, exit 2, instead of a traceback.
  static constexpr const char* kBoot =
      "import sys\n"
      "try:\n"
      "    from parity.view import main\n"
      "except ImportError as e:\n"
      "    print(f'parity: error: view: {sys.executable} cannot import parity.view ({e})', file=sys.stderr)\n"
      "    sys.exit(2)\n"
      "sys.exit(main(sys.argv[1:]))\n";
  std::vector<std::string> args = {py->python, "-c", kBoot, o.dir};
  if (o.port > 0) args.insert(args.end(), {"--port", std::to_string(o.port)});
  if (o.no_browser) args.push_back("--no-browser");
  if (o.print_url) args.push_back("--print-url");
  SpawnOptions options{.search_path = true};
  if (!py->pythonpath.empty()) options.env.push_back(PrependedEnv("PYTHONPATH", py->pythonpath));
  const Status ran = ExecInPlace(args, options);  // returns only when it could not
  fmt::print(stderr, "parity: error: view: {}\n", ran.error().message());
  return 2;
}

}  // namespace

void RegisterView(CLI::App& app) {
  auto o = std::make_shared<ViewOptions>();
  auto* cmd = app.add_subcommand(
      "view", "open a --model-explorer (or --report) folder in Model Explorer on 127.0.0.1: the original and ORT's "
              "optimized graph side by side, the overlays loaded, at the first divergent node");
  cmd->add_option("dir", o->dir, "the --model-explorer folder, or a --report folder written with --model-explorer")
      ->required();
  cmd->add_option("--port", o->port, "the server's port (default: a free one)");
  cmd->add_flag("--no-browser", o->no_browser, "print the address, open no browser");
  cmd->add_flag("--print-url", o->print_url, "print the page's address and exit (starts nothing)");
  cmd->callback([o] { ExitCode() = RunView(*o); });
}

}  // namespace parity::cli
