// Helpers for tests that drive the real `parity` binary.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace parity::e2e {

// True in the AddressSanitizer build (`make test SANITIZE=1`). There a
// process's resident memory is mostly ASan's (shadow memory, redzones, the
// quarantine of freed blocks), so the tests that bound parity's peak RSS
// measure it in the plain build only, and say so when skipped.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
inline constexpr const char* kRssUnderAsan =
    "peak RSS under ASan is the sanitizer's shadow memory and quarantine; measured in the plain build";

struct ProcessResult {
  int exit_code = -1;      // the exit status, or 128 + signal
  std::string out;         // stdout
  std::string err;         // stderr
  int64_t peak_rss_bytes = 0;
  double wall_seconds = 0;
};

// Runs PARITY_BINARY with `args` (no shell), capturing stdout and stderr.
ProcessResult RunParity(const std::vector<std::string>& args);

// Runs any program (argv[0] looked up in PATH).
ProcessResult RunProgram(const std::vector<std::string>& argv);

// A fresh empty directory under the system temp dir, removed by the caller
// (or left for inspection on failure).
std::filesystem::path MakeTempDir(const std::string& prefix);

// Lines of `text` (no trailing empty line).
std::vector<std::string> Lines(const std::string& text);

}  // namespace parity::e2e
