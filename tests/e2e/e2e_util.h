// Helpers for tests that drive the real `parity` binary.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"
#include "core/testing/temp_dir.h"
#include "onnx/model.h"

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
  int term_signal = 0;     // the signal that killed it, 0 if it exited
  std::string out;         // stdout
  std::string err;         // stderr
  int64_t peak_rss_bytes = 0;
  // Bytes it wrote to files (ru_oublock: counted when the pages are dirtied,
  // so a file removed before it reaches the disk counts too).
  int64_t written_bytes = 0;
  double wall_seconds = 0;
  double cpu_seconds = 0;  // user + system, of the child alone
};

// A started child: its pid and the read ends of its stdout and stderr.
struct Child {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::chrono::steady_clock::time_point start;
};

// Starts a program (argv[0] looked up in PATH; no shell) with stdout and
// stderr piped, and SIGINT/SIGTERM at their defaults, as a shell starts a
// foreground job (a test runner that ignores them must not pass that on).
Child Start(const std::vector<std::string>& argv);
Child StartParity(const std::vector<std::string>& args);  // PARITY_BINARY args...

// Reads both streams to their end, waits for the child and measures it
// (wait4's rusage: the child alone).
ProcessResult Finish(Child& child);

// Start + Finish.
ProcessResult RunProgram(const std::vector<std::string>& argv);
ProcessResult RunParity(const std::vector<std::string>& args);

// A fresh empty directory under the system temp dir, removed by the caller
// (or left for inspection on failure); TempDir removes its own.
using testing::MakeTempDir;
using testing::TempDir;

// Lines of `text` (no trailing empty line).
std::vector<std::string> Lines(const std::string& text);

// The JSON document at `p` (a report parity wrote); throws when it is not JSON.
nlohmann::json ReadJson(const std::filesystem::path& p);

// Writes `text` to `p` byte for byte, replacing what was there.
void WriteText(const std::filesystem::path& p, const std::string& text);

// Expects `r` to have exited with `code`, not killed by a signal; prints its
// output when not.
void ExpectExit(const ProcessResult& r, int code);

// The small model the security tests write, refuse and run again:
// input[1,4] -> Add c -> Relu -> `output`, its nodes in `scope` when one is
// given (the intermediate is then a PyTorch-like layer).
Model AddReluModel(float c = 0.5f, const std::string& output = "output", const std::string& scope = "");
// The input it takes: float32 [1, 4] of ones.
Tensor AddReluInput();

// Writes dir/m.onnx, y = Reshape(x ['n', 8], s [2]) (node 'the_reshape'),
// which ORT loads but cannot run on a sample whose `s` does not fit x, and
// dir/in.npz by `np.savez(path, <savez_args>)` (Python source, e.g.
// "x=np.ones((2, 8), np.float32), s=np.array([3, 5], np.int64)").
ProcessResult WriteReshapeModel(const std::string& dir, const std::string& savez_args);

}  // namespace parity::e2e
