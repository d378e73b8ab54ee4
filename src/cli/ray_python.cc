#include "cli/ray_python.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace parity::cli {
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

}  // namespace parity::cli
