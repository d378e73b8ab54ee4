// Helpers shared by the tensor I/O tests: TempDir (core/testing/temp_dir.h),
// whole-file read/write, and running numpy from the project's .venv
// (PARITY_PYTHON, set by CMake) on a script.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/testing/temp_dir.h"

namespace parity::testing {

inline constexpr const char* kSystemPython = PARITY_PYTHON;

inline std::string ReadFileString(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFileString(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<std::string> ListDir(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct PythonRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Writes `script` next to `dir` and runs it with `args`.
inline PythonRun RunPython(const TempDir& dir, const std::string& script, const std::string& args = "") {
  const auto script_path = dir / "script.py";
  WriteFileString(script_path, script);
  const std::string cmd = std::string(kSystemPython) + " " + script_path.string() + " " + args + " 2>&1";
  PythonRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return run;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) run.output.append(buf, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

inline bool HaveNumpy() {
  static const bool have =
      std::system((std::string(kSystemPython) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0;
  return have;
}

#define PARITY_REQUIRE_NUMPY() \
  if (!::parity::testing::HaveNumpy()) GTEST_SKIP() << "numpy is not importable by " PARITY_PYTHON

}  // namespace parity::testing
