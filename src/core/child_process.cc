#include "core/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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

}  // namespace

void KillPendingChildren() {
  for (auto& slot : g_children)
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, SIGKILL);
  for (auto& slot : g_children)
    if (const pid_t pid = slot.exchange(0); pid > 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
}

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv) {
  if (argv.empty()) return InternalError("ChildProcess::Start: no program");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
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
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only: the parent may have threads.
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    // Nothing else of ours: a descriptor our caller left inheritable (its
    // pipe to our stdout) must not stay open in a child it never started.
    ::syscall(SYS_close_range, 3, ~0U, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // a child writing to a parent gone ends
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ChildProcess c;
  c.pid_ = pid;
  if (pid > 0) c.slot_ = RegisterChild(pid);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  c.in_ = in[1], c.out_ = out[0], c.err_ = err[0];
  if (pid < 0) {
    c.pid_ = -1;
    return RuntimeError(fmt::format("cannot start a child process ({}): fork failed", argv[0]));
  }
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
