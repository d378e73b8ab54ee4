#include "engine/ray/ray_driver.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace parity {
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

// The driver's environment: ours, PYTHONPATH prefixed with `pythonpath`.
std::vector<std::string> DriverEnvironment(const std::string& pythonpath) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e)
    if (pythonpath.empty() || !std::string_view(*e).starts_with("PYTHONPATH=")) env_text.emplace_back(*e);
  if (!pythonpath.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    env_text.push_back("PYTHONPATH=" + pythonpath + (old != nullptr && *old ? ":" + std::string(old) : ""));
  }
  return env_text;
}

// Runs argv with its stdout on our stderr, PYTHONPATH set to `pythonpath`
// when it is not empty. A SIGINT or SIGTERM while it runs is forwarded to it
// and, once it has exited, returned in `signaled` (0: none).
Result<int> Spawn(const std::vector<std::string>& argv, const std::string& pythonpath, int& signaled) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment, built before fork (no allocation after it).
  std::vector<std::string> env_text = DriverEnvironment(pythonpath);
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

}  // namespace

std::vector<std::string> RayDriverArgv(const DriverPython& py, const RayEngineOptions& ray, const fs::path& scratch,
                                       bool progress) {
  std::vector<std::string> argv = {py.python, "-m", "parity._ray_engine", "--entries",
                                   (scratch / "entries.jsonl").string(), "--out", (scratch / "rows.txt").string(),
                                   "--actors", std::to_string(ray.actors)};
  if (progress) argv.push_back("--progress");
  // A local cluster keeps its session files in our folder (removed with it).
  if (!ray.address.empty())
    argv.insert(argv.end(), {"--address", ray.address});
  else
    argv.insert(argv.end(), {"--temp-dir", (scratch / "ray").string()});
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  argv.insert(argv.end(), {"--", ec ? "parity" : self.string()});
  return argv;
}

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

}  // namespace parity
