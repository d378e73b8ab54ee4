#include "engine/ray/ray_driver.h"

#include <csignal>

#include <fmt/format.h>

#include "core/child_process.h"

namespace parity {
namespace fs = std::filesystem;

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
  // The one spawner (core/child_process.h): the driver on our stdin and
  // stderr, a SIGINT/SIGTERM forwarded to it (it stops Ray and removes its
  // folder, python/parity/_ray_engine.py).
  SpawnOptions options{.search_path = true};
  if (!pythonpath.empty()) options.env.push_back(PrependedEnv("PYTHONPATH", pythonpath));
  PARITY_ASSIGN_OR_RETURN(const ForegroundExit exit,
                          WithContext(RunInForeground(argv, options, /*stdout_to_stderr=*/true), "--engine ray"));
  int signaled = exit.interrupted;
  // The driver says it was interrupted (128 + SIGINT/SIGTERM, _ray_engine.py)
  // when the signal reached it and not us (a terminal's Ctrl-C goes to the
  // whole process group; seen once under ASan and load): parity was
  // interrupted all the same.
  if (signaled == 0 && (exit.code == 128 + SIGINT || exit.code == 128 + SIGTERM)) signaled = exit.code - 128;
  if (signaled != 0) {  // interrupted: no rows, no report; our folder goes, then parity's handler exits
    std::error_code ec;
    fs::remove_all(scratch, ec);
    std::raise(signaled);
  }
  if (exit.code == 2) return InvalidArgument("--engine ray: the Python driver refused the run (its message is above)");
  if (exit.code != 0) return RuntimeError(fmt::format("--engine ray: the Python driver failed (exit {})", exit.code));
  return {};
}

}  // namespace parity
