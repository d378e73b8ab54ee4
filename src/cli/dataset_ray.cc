// The Ray engine of check --dataset, seen from the command line: it writes
// the entries and the resolved configs into a temporary folder, runs
// `PY -m parity._ray_engine` (python/parity/_ray_engine.py: Ray Data
// map_batches on an actor pool, each actor running `parity dataset-worker`),
// waits, and reads the rows it wrote back (engine/dataset/dataset_rows.h).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "cli/corpus_cli.h"
#include "cli/dataset_cli.h"
#include "cli/ray_python.h"
#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "engine/dataset/dataset_rows.h"
#include "core/entry_record.h"
#include "engine/run/environment.h"
#include "ort/ep_libraries.h"

namespace parity::cli {
namespace fs = std::filesystem;

namespace {

// The Python driver's pid while it runs, and the first SIGINT/SIGTERM that
// came meanwhile (written by ForwardSignal only).
volatile sig_atomic_t g_driver = 0;
volatile sig_atomic_t g_signal = 0;

// Async-signal-safe: kill(2). The driver stops Ray and removes its folder
// (python/parity/_ray_engine.py); Spawn's caller then removes ours and exits
// as parity's own handler does (cli/signals.h).
extern "C" void ForwardSignal(int sig) {
  if (g_signal == 0) g_signal = sig;
  if (g_driver > 0) ::kill(static_cast<pid_t>(g_driver), sig);
}

// Runs argv with its stdout on our stderr (Ray's logs stay off the summary),
// PYTHONPATH set to `pythonpath` when it is not empty. A SIGINT or SIGTERM
// while it runs is forwarded to it and, once it has exited, returned in
// `signaled` (0: none).
Result<int> Spawn(const std::vector<std::string>& argv, const std::string& pythonpath, int& signaled) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment, built before fork (no allocation after it).
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e)
    if (pythonpath.empty() || !std::string_view(*e).starts_with("PYTHONPATH=")) env_text.emplace_back(*e);
  if (!pythonpath.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    env_text.push_back("PYTHONPATH=" + pythonpath + (old != nullptr && *old ? ":" + std::string(old) : ""));
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::fflush(stdout);
  struct sigaction forward {}, old_int {}, old_term {};
  forward.sa_handler = &ForwardSignal;
  sigemptyset(&forward.sa_mask);
  g_signal = 0;
  ::sigaction(SIGINT, &forward, &old_int);
  ::sigaction(SIGTERM, &forward, &old_term);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(2, 1);
    execvpe(args[0], args.data(), envp.data());  // exec resets the handlers
    std::fprintf(stderr, "parity: --engine ray: cannot run %s\n", args[0]);
    _exit(127);
  }
  g_driver = pid > 0 ? pid : 0;
  if (pid > 0 && g_signal != 0) ::kill(pid, g_signal);  // came between fork and here
  int status = 0;
  pid_t waited = -1;
  while (pid > 0 && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  g_driver = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  signaled = g_signal;
  if (pid < 0) return RuntimeError("--engine ray: fork failed");
  if (waited < 0) return RuntimeError("--engine ray: lost the Python driver");
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // The driver says it was interrupted (128 + SIGINT/SIGTERM, _ray_engine.py)
  // when the signal reached it and not us (a terminal's Ctrl-C goes to the
  // whole process group; seen once under ASan and load): parity was
  // interrupted all the same.
  if (signaled == 0 && (rc == 128 + SIGINT || rc == 128 + SIGTERM)) signaled = rc - 128;
  return rc;
}

Status WriteInputs(const fs::path& tmp, const std::vector<fs::path>& entries, const DatasetOptions& o) {
  // Framed records (core/entry_record.h): a file name holding a
  // newline or bytes that are not UTF-8 stays one entry, exactly.
  std::string list;
  for (size_t i = 0; i < entries.size(); ++i) list += FormatEntryRecord(i, fs::absolute(entries[i]).string()) + "\n";
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(tmp / "entries.jsonl", list));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "target.json", RunConfigToJson(o.target)));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "reference.json", RunConfigToJson(o.reference.config)));
  return WriteJsonFile(tmp / "tolerance.json", TolerancePolicyToJson(o.policy));
}

std::vector<std::string> DriverArgv(const DriverPython& py, const DatasetCmdOptions& c, const DatasetOptions& o,
                                    const fs::path& tmp) {
  std::vector<std::string> argv = {py.python, "-m", "parity._ray_engine", "--entries", (tmp / "entries.jsonl").string(),
                                   "--out", (tmp / "rows.txt").string(), "--actors", std::to_string(c.ray_actors)};
  // A local cluster keeps its session files in our folder (removed with it).
  if (!c.ray_address.empty())
    argv.insert(argv.end(), {"--address", c.ray_address});
  else
    argv.insert(argv.end(), {"--temp-dir", (tmp / "ray").string()});
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  argv.insert(argv.end(), {"--", ec ? "parity" : self.string(), "dataset-worker", fs::absolute(o.model_path).string(),
                           "--target-config", (tmp / "target.json").string(), "--reference-config",
                           (tmp / "reference.json").string(), "--tolerance-policy", (tmp / "tolerance.json").string()});
  if (const auto* file = o.reference.model_file())
    argv.insert(argv.end(), {"--reference-model", fs::absolute(*file).string()});
  if (!o.reference_outputs.empty())
    argv.insert(argv.end(), {"--reference-outputs", fs::absolute(o.reference_outputs).string()});
  if (o.allow_symlinks) argv.push_back("--allow-symlinks");
  // The actors run the ORT and the plugin EPs this process runs, whatever
  // their environment says (--ort-library, PARITY_ORT_LIBRARY, --ep-library).
  argv.insert(argv.end(), {"--ort-library", CurrentOrt().library});
  std::vector<std::string> providers = o.target.providers;
  providers.insert(providers.end(), o.reference.config.providers.begin(), o.reference.config.providers.end());
  for (const ort::EpLibrary& lib : ort::EpLibrariesFor(providers))
    argv.insert(argv.end(), {"--ep-library", lib.name + "=" + lib.path});
  return argv;
}

Status ReadRows(const fs::path& path, DatasetReport& report) {
  std::ifstream in(path);
  if (!in) return RuntimeError("--engine ray: the driver wrote no rows");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    PARITY_ASSIGN_OR_RETURN(DatasetLine l, ParseDatasetLine(line, report.outputs.size()));
    if (l.row) {
      report.rows.push_back(std::move(*l.row));
      continue;
    }
    ++report.skipped;
    if (report.bad.size() < kMaxListedBadSamples) report.bad.push_back(std::move(l.bad));
  }
  // "ENTRIES<TAB>SAMPLES" run again after an actor died (the driver's ledger).
  std::ifstream retried(path.string() + ".retried");
  if (retried >> report.retried_entries >> report.retried && report.retried_entries > 0)
    report.notes.push_back(fmt::format("{} samples ({} entries) were run again after a Ray actor died",
                                       report.retried, report.retried_entries));
  return {};
}

}  // namespace

Status RunRayDriver(const std::vector<std::string>& argv, const std::string& pythonpath, const fs::path& scratch) {
  int signaled = 0;
  PARITY_ASSIGN_OR_RETURN(int rc, Spawn(argv, pythonpath, signaled));
  if (signaled != 0) {  // interrupted: no rows, no report; our folder goes, then parity's handler exits
    std::error_code ec;
    fs::remove_all(scratch, ec);
    std::raise(signaled);
  }
  if (rc == 2) return InvalidArgument("--engine ray: the Python driver refused the run (its message is above)");
  if (rc != 0) return RuntimeError(fmt::format("--engine ray: the Python driver failed (exit {})", rc));
  return {};
}

DatasetRowSource RayRowSource(const DatasetCmdOptions& c, const DatasetOptions& o) {
  return [c, o](const std::vector<fs::path>& entries, DatasetReport& report) -> Status {
    // Registered: an interrupt before the driver runs (or after it) removes it too.
    PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, WithContext(ScratchDir::Create("ray"), "--engine ray"));
    const fs::path tmp = scratch.path();
    PARITY_RETURN_IF_ERROR(WriteInputs(tmp, entries, o));
    PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(c.ray_python));
    PARITY_RETURN_IF_ERROR(RunRayDriver(DriverArgv(py, c, o, tmp), py.pythonpath, tmp));
    return ReadRows(tmp / "rows.txt", report);
  };
}

}  // namespace parity::cli
