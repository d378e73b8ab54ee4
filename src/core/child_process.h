// A child process on three pipes, read with limits (issue 56): its stdout as
// lines of at most a given length, each wait bounded by a deadline when one
// is given, its stderr drained meanwhile into a bounded tail. Whatever the
// child writes (a library that floods its output, one that never answers),
// the parent holds at most one line and the tail, and waits at most until
// the deadline. A live child is registered, so that KillPendingChildren()
// kills and reaps it from a SIGINT/SIGTERM handler (cli/signals.h).
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

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  // What stays of the child's stderr: its last bytes.
  static constexpr size_t kStderrTailBytes = 64 * 1024;

  // Runs argv[0] (a path; no PATH search) with argv, its stdin, stdout and
  // stderr on pipes. kRuntime when no pipe or process can be made; a program
  // that cannot be executed exits 127.
  static Result<ChildProcess> Start(const std::vector<std::string>& argv);

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

// Kills (SIGKILL) and reaps every registered child. Async-signal-safe (kill,
// waitpid); 32 children registered at once.
void KillPendingChildren();

}  // namespace parity
