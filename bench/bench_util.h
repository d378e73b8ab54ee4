// Shared by the plain-main benchmarks (locate_bench, drilldown_bench): wall
// time in milliseconds and running one case in a forked child, so that its
// peak RSS and any crash are its own.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>

namespace parity::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Runs `f` in a forked child and waits for it; the child's output is flushed first.
inline void InChild(const std::function<void()>& f) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    f();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace parity::bench
