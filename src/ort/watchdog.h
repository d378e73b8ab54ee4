// INTERNAL to src/ort/: an ORT run under the limits in force
// (ort/run_limits.h): a watchdog thread sets the RunOptions' terminate flag
// when the run outlives its time or grows the process's memory past its
// limit. Session::Run and BoundSession::Run share it.
#pragma once

#include <fmt/format.h>
#include <onnxruntime_cxx_api.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/status.h"
#include "ort/run_limits.h"

namespace parity::ort {

// Sets `options`' terminate flag when a run outlives `limits.seconds` (> 0)
// or grows the process's resident memory by more than `limits.memory_bytes`
// (> 0, polled every 10 ms): ORT checks the flag between kernels and ends the
// run with an error. Stop() (or the destructor) ends the watch; fired() says
// which limit stopped it, read after Stop().
class Watchdog {
 public:
  enum class Fired { kNo, kTime, kMemory };

  Watchdog(Ort::RunOptions& options, RunLimits limits) {
    if (limits.seconds <= 0 && limits.memory_bytes <= 0) return;
    const int64_t start_rss = limits.memory_bytes > 0 ? ResidentBytes() : 0;
    thread_ = std::thread([this, &options, limits, start_rss] {
      using Clock = std::chrono::steady_clock;
      const auto deadline = limits.seconds > 0
                                ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(limits.seconds))
                                : Clock::time_point::max();
      std::unique_lock lock(mutex_);
      while (!done_) {
        const auto wake = limits.memory_bytes > 0 ? std::min(deadline, Clock::now() + std::chrono::milliseconds(10))
                                                  : deadline;
        if (done_cv_.wait_until(lock, wake, [this] { return done_; })) return;
        if (Clock::now() >= deadline) {
          fired_ = Fired::kTime;
        } else if (limits.memory_bytes > 0 && start_rss > 0 && ResidentBytes() - start_rss > limits.memory_bytes) {
          fired_ = Fired::kMemory;
        } else {
          continue;
        }
        options.SetTerminate();
        return;
      }
    });
  }
  ~Watchdog() { Stop(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  Fired fired() const { return fired_; }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  Fired fired_ = Fired::kNo;
  std::thread thread_;
};


// Calls `run` with RunOptions watched under CurrentRunLimits() (`timeout_s`
// > 0 replaces its time; none in force: no watchdog, null options). A run
// the watchdog stopped is a kRuntime error naming the limit (kRunTimedOut,
// kRunOverMemory); `run`'s other exceptions propagate.
inline Status RunUnderLimits(double timeout_s, const std::function<void(const Ort::RunOptions&)>& run) {
  RunLimits limits = CurrentRunLimits();
  if (timeout_s > 0) limits.seconds = timeout_s;
  if (limits.seconds <= 0 && limits.memory_bytes <= 0) {
    run(Ort::RunOptions{nullptr});
    return {};
  }
  Ort::RunOptions options;
  Watchdog watchdog(options, limits);
  try {
    run(options);
  } catch (const Ort::Exception&) {
    watchdog.Stop();
    if (watchdog.fired() == Watchdog::Fired::kTime)
      return RuntimeError(fmt::format("the run {} {:g} s and was stopped", kRunTimedOut, limits.seconds));
    if (watchdog.fired() == Watchdog::Fired::kMemory)
      return RuntimeError(fmt::format("the run {} {} MiB and was stopped", kRunOverMemory, limits.memory_bytes >> 20));
    throw;
  }
  return {};
}

}  // namespace parity::ort
