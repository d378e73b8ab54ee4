#include "engine/ray/driver_python.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/child_process.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool Executable(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// The first executable file `name` in a PATH folder, if any.
std::optional<fs::path> OnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && Executable(fs::path(dir) / name)) return fs::path(dir) / name;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return std::nullopt;
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

std::string PythonPath(const std::string& python) {
  if (python.find('/') != std::string::npos) return python;
  auto found = OnPath(python);
  return found ? found->string() : python;
}

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
  const bool found = py.python.find('/') != std::string::npos ? Executable(py.python) : OnPath(py.python).has_value();
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
  // The one spawner (core/child_process.h): a Python given by name is found
  // on PATH, as FindDriverPython did, the checkout's python/ first on
  // PYTHONPATH. One that cannot be executed is an error of Start.
  SpawnOptions options{.search_path = true};
  if (!py.pythonpath.empty()) options.env.push_back(PrependedEnv("PYTHONPATH", py.pythonpath));
  const std::string how = "give one with both (--ray-python PY or PARITY_PYTHON=PY)";
  auto started = ChildProcess::Start({py.python, "-c", script}, options);
  if (!started)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) cannot be run ({}); {}", py.python,
                                       py.origin, started.error().message(), how));
  ChildProcess child = std::move(*started);
  // Bounded: what it prints (a name or two) and how long it takes.
  const auto deadline = ChildProcess::Clock::now() + std::chrono::seconds(60);
  std::string said, line;
  ChildProcess::Got got;
  while ((got = child.ReadLine(line, 256, deadline)) == ChildProcess::Got::kLine)
    if (said.size() < 256) said += line;
  if (got == ChildProcess::Got::kTimeout)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) did not answer in 60 s",
                                       py.python, py.origin));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildProcess::Clock::now());
  const int status = child.Stop(std::max(left, std::chrono::milliseconds(0)));
  const int rc = status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (rc == 0) return py;
  if (rc == 3 && !said.empty() && said.size() < 32)
    return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) cannot import {}; {}", py.python,
                                       py.origin, said, how));
  return InvalidArgument(fmt::format("--engine ray: the driver's Python '{}' ({}) is no working Python with parity "
                                     "and ray (a test import exited {}); {}",
                                     py.python, py.origin, rc, how));
}

}  // namespace parity
