#include "core/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

namespace parity {
namespace {

// The live children a signal handler kills: a fixed array a handler can walk
// without allocating or locking (0: a free slot).
constexpr int kChildSlots = 32;
std::atomic<pid_t> g_children[kChildSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);

int RegisterChild(pid_t pid) {
  for (int i = 0; i < kChildSlots; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;  // not killed on a signal; still stopped by its owner
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// argv and the environment as exec takes them, made before fork: the child
// of a process with threads may only make async-signal-safe calls.
class ExecImage {
 public:
  ExecImage(const std::vector<std::string>& argv, const SpawnOptions& options) : search_path_(options.search_path) {
    for (const auto& a : argv) args_.push_back(const_cast<char*>(a.c_str()));
    args_.push_back(nullptr);
    if (options.env.empty()) return;  // ours, as it is
    const auto name = [](std::string_view e) { return e.substr(0, e.find('=') + 1); };
    for (char** e = environ; *e != nullptr; ++e) {
      const bool replaced = std::ranges::any_of(options.env, [&](const std::string& o) { return name(o) == name(*e); });
      if (!replaced) env_text_.emplace_back(*e);
    }
    env_text_.insert(env_text_.end(), options.env.begin(), options.env.end());
    for (auto& e : env_text_) envp_.push_back(e.data());
    envp_.push_back(nullptr);
  }
  const char* program() const { return args_[0]; }
  // Returns only when exec failed (errno says why). Async-signal-safe.
  void Exec() const {
    char* const* envp = envp_.empty() ? environ : const_cast<char* const*>(envp_.data());
    if (search_path_)
      ::execvpe(args_[0], args_.data(), envp);
    else
      ::execve(args_[0], args_.data(), envp);
  }

 private:
  bool search_path_;
  std::vector<char*> args_;
  std::vector<std::string> env_text_;
  std::vector<char*> envp_;
};

// The child's standard descriptors: a descriptor to put there, or -1 to
// keep ours; `out_to_err` puts our stderr on its stdout.
struct ChildFds {
  int in = -1, out = -1, err = -1;
  bool out_to_err = false;
};

std::string CannotRun(const char* program, int error) {
  return fmt::format("cannot run {}: {}", program, std::strerror(error));
}

// Forks a child that sets up `fds`, closes every other descriptor of ours,
// puts SIGPIPE to its default, `mask` back, and execs `image`. Returns its
// pid once exec ran; when exec failed (the child writes errno on a
// close-on-exec pipe that exec would have closed), the child is reaped and
// the error names the program.
Result<pid_t> ForkExec(const ExecImage& image, const ChildFds& fds, const sigset_t& mask) {
  int report[2] = {-1, -1};
  if (::pipe2(report, O_CLOEXEC) != 0)
    return RuntimeError(fmt::format("cannot start a child process ({}): no pipe", image.program()));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only: the parent may have threads.
    if (fds.in >= 0) ::dup2(fds.in, 0);
    if (fds.out >= 0) ::dup2(fds.out, 1);
    if (fds.out_to_err) ::dup2(2, 1);
    if (fds.err >= 0) ::dup2(fds.err, 2);
    // Nothing else of ours but the report pipe (closed by exec): a
    // descriptor our caller left inheritable (its pipe to our stdout) must
    // not stay open in a child it never started.
    if (report[1] > 3) ::syscall(SYS_close_range, 3, report[1] - 1, 0);
    ::syscall(SYS_close_range, report[1] + 1, ~0U, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // a child writing to a parent gone ends
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    image.Exec();
    const int error = errno;
    [[maybe_unused]] const ssize_t n = ::write(report[1], &error, sizeof error);
    _exit(127);
  }
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return RuntimeError(fmt::format("cannot start a child process ({}): fork failed", image.program()));
  }
  int error = 0;
  ssize_t n;
  while ((n = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n != static_cast<ssize_t>(sizeof error)) return pid;  // closed by exec: it runs
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return RuntimeError(CannotRun(image.program(), error));
}

// The foreground child's pid while it runs, and the first SIGINT/SIGTERM
// that came meanwhile (written by ForwardSignal only).
volatile sig_atomic_t g_foreground = 0;
volatile sig_atomic_t g_signal = 0;

// Async-signal-safe: kill(2). The child (the Ray driver) stops what it
// started and exits; RunInForeground's caller then cleans up.
extern "C" void ForwardSignal(int sig) {
  if (g_signal == 0) g_signal = sig;
  if (g_foreground > 0) ::kill(static_cast<pid_t>(g_foreground), sig);
}

}  // namespace

std::string PrependedEnv(std::string_view name, std::string_view prefix) {
  const char* old = std::getenv(std::string(name).c_str());
  return fmt::format("{}={}{}{}", name, prefix, old != nullptr && *old ? ":" : "", old != nullptr ? old : "");
}

Result<ForegroundExit> RunInForeground(const std::vector<std::string>& argv, const SpawnOptions& options,
                                       bool stdout_to_stderr) {
  if (argv.empty()) return InternalError("RunInForeground: no program");
  const ExecImage image(argv, options);
  struct sigaction forward {}, old_int {}, old_term {};
  forward.sa_handler = &ForwardSignal;
  sigemptyset(&forward.sa_mask);
  g_signal = 0;
  ::sigaction(SIGINT, &forward, &old_int);
  ::sigaction(SIGTERM, &forward, &old_term);
  sigset_t mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  const Result<pid_t> pid = ForkExec(image, {.out_to_err = stdout_to_stderr}, mask);  // exec resets the handlers
  g_foreground = pid ? *pid : 0;
  if (pid && g_signal != 0) ::kill(*pid, g_signal);  // came between fork and here
  int status = 0;
  pid_t waited = -1;
  while (pid && (waited = ::waitpid(*pid, &status, 0)) < 0 && errno == EINTR) {
  }
  g_foreground = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  if (!pid) return std::unexpected(pid.error());
  if (waited < 0) return RuntimeError(fmt::format("lost the child process {}", argv[0]));
  return ForegroundExit{.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                        .interrupted = g_signal};
}

Status ExecInPlace(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return InternalError("ExecInPlace: no program");
  const ExecImage image(argv, options);
  std::fflush(nullptr);
  image.Exec();
  return RuntimeError(CannotRun(image.program(), errno));
}

void KillPendingChildren() {
  for (auto& slot : g_children)
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, SIGKILL);
  for (auto& slot : g_children)
    if (const pid_t pid = slot.exchange(0); pid > 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
}

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return InternalError("ChildProcess::Start: no program");
  const ExecImage image(argv, options);
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      if (fd >= 0) ::close(fd);
    return RuntimeError(fmt::format("cannot make a pipe to a child process ({})", argv[0]));
  }
  // No SIGINT/SIGTERM between fork and the registration: an interrupt then
  // would leave the child running. The child gets the old mask back.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  const Result<pid_t> pid = ForkExec(image, {.in = in[0], .out = out[1], .err = err[1]}, old);
  ChildProcess c;
  if (pid) {
    c.pid_ = *pid;
    c.slot_ = RegisterChild(*pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  c.in_ = in[1], c.out_ = out[0], c.err_ = err[0];
  if (!pid) return std::unexpected(pid.error());  // c closes the pipes
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      slot_(std::exchange(o.slot_, -1)),
      in_(std::exchange(o.in_, -1)),
      out_(std::exchange(o.out_, -1)),
      err_(std::exchange(o.err_, -1)),
      pending_(std::move(o.pending_)),
      tail_(std::move(o.tail_)) {}

ChildProcess::~ChildProcess() { Stop(std::chrono::milliseconds(0)); }

bool ChildProcess::Send(std::string_view text) {
  while (!text.empty()) {
    if (in_ < 0) return false;
    const ssize_t n = ::write(in_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool ChildProcess::ReadStderrOnce() {
  char buf[16384];
  ssize_t n;
  while ((n = ::read(err_, buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  if (n <= 0) {
    CloseFd(err_);
    return false;
  }
  tail_.append(buf, static_cast<size_t>(n));
  if (tail_.size() > kStderrTailBytes) tail_.erase(0, tail_.size() - kStderrTailBytes);
  return true;
}

ChildProcess::Got ChildProcess::ReadLine(std::string& line, size_t max_bytes,
                                         std::optional<Clock::time_point> deadline) {
  line.clear();
  for (;;) {
    if (const size_t nl = pending_.find('\n'); nl != std::string::npos) {
      if (nl > max_bytes) {
        pending_.clear();
        return Got::kTooLong;
      }
      line.assign(pending_, 0, nl);
      pending_.erase(0, nl + 1);
      return Got::kLine;
    }
    if (pending_.size() > max_bytes) {
      pending_.clear();
      return Got::kTooLong;
    }
    if (out_ < 0) {
      if (pending_.empty()) return Got::kEnd;
      line = std::exchange(pending_, {});
      return Got::kLine;
    }
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return Got::kTimeout;
      wait_ms = static_cast<int>(std::min<long long>(left, 60'000));
    }
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int ready = ::poll(fds, err_ >= 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno != EINTR) return Got::kEnd;
    if (ready <= 0) continue;
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) ReadStderrOnce();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n;
      while ((n = ::read(out_, buf, sizeof buf)) < 0 && errno == EINTR) {
      }
      if (n <= 0)
        CloseFd(out_);
      else
        pending_.append(buf, static_cast<size_t>(n));
    }
  }
}

void ChildProcess::DrainStderr(std::optional<Clock::time_point> until) {
  while (err_ >= 0) {
    int wait_ms = -1;
    if (until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - Clock::now()).count();
      if (left <= 0) return;
      wait_ms = static_cast<int>(left);
    }
    pollfd fd{err_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return;
    if (ready > 0) ReadStderrOnce();
  }
}

std::string ChildProcess::LastWords(size_t max_bytes) {
  if (out_ < 0) DrainStderr(Clock::now() + std::chrono::seconds(1));
  std::string_view t = tail_;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  const size_t nl = t.rfind('\n');
  std::string_view last = nl == std::string_view::npos ? t : t.substr(nl + 1);
  for (std::string_view prefix : {"parity: ", "error: "})
    if (last.starts_with(prefix)) last.remove_prefix(prefix.size());
  if (last.size() > max_bytes) return std::string(last.substr(0, max_bytes)) + "...";
  return std::string(last);
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  CloseFd(in_);  // the child's stdin ends: a worker exits
  CloseFd(out_);
  CloseFd(err_);
  if (pid_ <= 0) return -1;
  const auto until = Clock::now() + grace;
  siginfo_t info{};
  // Wait (without reaping: the pid stays registered until it is dead) for
  // the exit, then kill what is still running.
  for (;;) {
    info.si_pid = 0;
    const int r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) break;
    if (r < 0 && errno != EINTR) break;
    if (Clock::now() >= until) {
      ::kill(pid_, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (slot_ >= 0) g_children[slot_].store(0);
  slot_ = -1;
  int status = -1;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return status;
}

}  // namespace parity
