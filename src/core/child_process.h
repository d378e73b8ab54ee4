// parity's one process spawner (issue 55 item 4): every process parity
// starts, or hands itself over to, goes through this file; a house test
// (tests/house/test_one_spawner.py) finds fork, exec and posix_spawn nowhere
// else in src/. Three forms:
// - ChildProcess: a child on three pipes, read with limits (issue 56): its
//   stdout as lines of at most a given length, each wait bounded by a
//   deadline when one is given, its stderr drained meanwhile into a bounded
//   tail. Whatever the child writes (a library that floods its output, one
//   that never answers), the parent holds at most one line and the tail, and
//   waits at most until the deadline. A live child is registered, so that
//   KillPendingChildren() kills and reaps it from a SIGINT/SIGTERM handler
//   (cli/signals.h). The child runner, the Python drivers (GenAI, fix, the
//   PyTorch corpus recorder) and the driver-Python probe use it.
// - RunInForeground: a child on parity's own stdin and stderr (the Ray
//   driver), waited for, SIGINT/SIGTERM forwarded to it meanwhile.
// - ExecInPlace: parity hands its process over (`parity view`).
// In each, a program that cannot be executed is an error naming it and
// errno's reason, returned by the call (the child reports exec's errno on a
// close-on-exec pipe), not a bare exit status 127.
//
// Thread-compatible: one caller at a time per object.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity {

// How a program is started.
struct SpawnOptions {
  // "NAME=VALUE" entries replacing NAME in (or added to) the child's
  // environment, which is otherwise ours.
  std::vector<std::string> env;
  // argv[0] without a '/' is looked up in PATH (execvpe); else it is a path.
  bool search_path = false;
};

// "NAME=PREFIX:OLD" for SpawnOptions::env: `prefix` before the current
// value of NAME (a PYTHONPATH with a checkout's python/ first); "NAME=PREFIX"
// when NAME is unset or empty.
std::string PrependedEnv(std::string_view name, std::string_view prefix);

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  // What stays of the child's stderr: its last bytes.
  static constexpr size_t kStderrTailBytes = 64 * 1024;

  // Runs argv[0] with argv, its stdin, stdout and stderr on pipes, every
  // other descriptor of ours closed in it, SIGPIPE at its default. kRuntime,
  // one line naming argv[0], when no pipe or process can be made or the
  // program cannot be executed (not found, not executable).
  static Result<ChildProcess> Start(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  // Stop(): a child still running is ended.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Writes all of `text` to the child's stdin; false when it cannot (the
  // child closed it or is gone: never a SIGPIPE, MSG_NOSIGNAL is not for
  // pipes, so the caller ignores SIGPIPE, as MakeOrtRunner does).
  bool Send(std::string_view text);

  enum class Got { kLine, kEnd, kTooLong, kTimeout };
  // The next line of the child's stdout, without its newline, in `line`.
  // kEnd: stdout ended (the child closed it or exited) with no line pending;
  // kTooLong: more than `max_bytes` came before a newline (what came is not
  // kept); kTimeout: `deadline` passed first (nullopt: none). Its stderr is
  // drained into the tail while it waits.
  Got ReadLine(std::string& line, size_t max_bytes, std::optional<Clock::time_point> deadline = std::nullopt);

  // The last non-empty line of what the child wrote on stderr so far (after
  // its stdout ended: all of it, waiting at most a second for the rest), at
  // most `max_bytes` of it (cut with "..."), without a "parity: " or
  // "error: " prefix.
  std::string LastWords(size_t max_bytes = 512);

  // Closes the child's stdin and its pipes, gives it `grace` to exit, then
  // kills it (SIGKILL); reaps it. Returns its wait status, -1 when none.
  int Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  ChildProcess() = default;
  void DrainStderr(std::optional<Clock::time_point> until_end);
  bool ReadStderrOnce();

  pid_t pid_ = -1;
  int slot_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string pending_;  // stdout read past the last line handed out
  std::string tail_;     // stderr's last bytes (at most kStderrTailBytes)
};

// What a foreground child ended with: its exit code (128 + N when signal N
// killed it), and the first SIGINT/SIGTERM parity received while it ran (0:
// none).
struct ForegroundExit {
  int code = 0;
  int interrupted = 0;
};

// Runs argv with parity's stdin and stderr, its stdout on parity's stderr
// when `stdout_to_stderr` (a driver's logs stay off parity's summary), and
// waits for it. A SIGINT or SIGTERM meanwhile is forwarded to it (it cleans
// up and exits) and reported in `interrupted`; parity's own handlers are
// back in place when this returns. kRuntime, one line, when it cannot be
// started or executed. Not thread-safe: one foreground child at a time (the
// forwarding handler's pid is a global). Not registered for
// KillPendingChildren: the forwarded signal ends it.
Result<ForegroundExit> RunInForeground(const std::vector<std::string>& argv, const SpawnOptions& options,
                                       bool stdout_to_stderr);

// Replaces this process with argv (every descriptor kept, stdout flushed).
// Returns only when it cannot: kRuntime, one line naming argv[0] and why.
Status ExecInPlace(const std::vector<std::string>& argv, const SpawnOptions& options);

// Kills (SIGKILL) and reaps every registered child. Async-signal-safe (kill,
// waitpid); 32 children registered at once.
void KillPendingChildren();

}  // namespace parity
