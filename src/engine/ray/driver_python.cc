#include "engine/ray/driver_python.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace parity {
namespace {

namespace fs = std::filesystem;

bool Executable(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

bool OnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && Executable(fs::path(dir) / name)) return true;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return false;
}

// The package's own Python for a binary at `exe`, if it has one.
std::optional<DriverPython> PackagePython(const fs::path& exe) {
  const fs::path dir = exe.parent_path();
  // An installed wheel: PREFIX/lib/python3.X/site-packages/parity/parity.
  if (dir.filename() == "parity" && dir.parent_path().filename() == "site-packages") {
    const fs::path prefix = dir.parent_path().parent_path().parent_path().parent_path();
    const std::string version = dir.parent_path().parent_path().filename().string();  // python3.X
    for (const fs::path& p : {prefix / "bin" / version, prefix / "bin" / "python3", prefix / "bin" / "python"})
      if (Executable(p)) return DriverPython{p.string(), "", "the package's environment"};
  }
  // A checkout: SRC/BUILD/parity, the package in SRC/python/parity.
  const fs::path src = dir.parent_path();
  if (fs::exists(src / "python" / "parity" / "_ray_engine.py")) {
    const fs::path venv = src / ".venv" / "bin" / "python";
    return DriverPython{Executable(venv) ? venv.string() : "python3", (src / "python").string(), "the checkout"};
  }
  return std::nullopt;
}

}  // namespace

Result<DriverPython> FindDriverPython(const std::string& ray_python, const std::string& exe) {
  DriverPython py;
  const char* env = std::getenv("PARITY_PYTHON");
  if (!ray_python.empty()) {
    py = {ray_python, "", "--ray-python"};
  } else if (env != nullptr && *env != '\0') {
    py = {env, "", "PARITY_PYTHON"};
  } else if (auto own = exe.empty() ? std::nullopt : PackagePython(exe)) {
    py = *own;
  } else {
    py = {"python3", "", "the default"};
  }
  const bool found = py.python.find('/') != std::string::npos ? Executable(py.python) : OnPath(py.python);
  if (!found)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) is not an executable file{}",
                                       py.python, py.origin,
                                       py.python.find('/') == std::string::npos ? " on PATH" : ""));
  return py;
}

Result<DriverPython> FindDriverPython(const std::string& ray_python) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return FindDriverPython(ray_python, ec ? std::string() : self.string());
}

Result<DriverPython> CheckDriverPython(const std::string& ray_python) {
  PARITY_ASSIGN_OR_RETURN(DriverPython py, FindDriverPython(ray_python));
  // Exit 0: both found; 3: one missing (its name on stdout); anything else:
  // no Python at all (/bin/false, a script that fails).
  const std::string script =
      "import importlib.util, sys\n"
      "missing = [m for m in ('parity', 'ray') if importlib.util.find_spec(m) is None]\n"
      "sys.stdout.write(' and '.join(missing)); sys.exit(3 if missing else 0)\n";
  std::vector<std::string> env_text;
  for (char** e = ::environ; *e != nullptr; ++e)
    if (py.pythonpath.empty() || !std::string_view(*e).starts_with("PYTHONPATH=")) env_text.emplace_back(*e);
  if (!py.pythonpath.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    env_text.push_back("PYTHONPATH=" + py.pythonpath + (old != nullptr && *old ? ":" + std::string(old) : ""));
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_text = {py.python, "-c", script};
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return RuntimeError("--engine ray: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string said;
  int status = 0;
  if (spawned == 0) {
    // Bounded: what it prints (a name or two) and how long it takes.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
      char buf[256];
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n > 0 && said.size() < 256) said.append(buf, static_cast<size_t>(n));
      std::this_thread::sleep_for(std::chrono::milliseconds(n > 0 ? 0 : 20));
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ::close(out[0]);
      return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) did not answer in 60 s",
                                         py.python, py.origin));
    }
    char buf[256];
    for (ssize_t n; said.size() < 256 && (n = ::read(out[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  if (spawned != 0)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) cannot be run: {}", py.python,
                                       py.origin, std::generic_category().message(spawned)));
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (rc == 0) return py;
  const std::string how = "give one with both (--ray-python PY or PARITY_PYTHON=PY)";
  if (rc == 3 && !said.empty() && said.size() < 32)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) cannot import {}; {}", py.python,
                                       py.origin, said, how));
  return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) is no working Python with parity "
                                     "and ray (a test import exited {}); {}",
                                     py.python, py.origin, rc, how));
}

}  // namespace parity
