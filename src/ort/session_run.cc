// Session::Run: input checks, Tensor -> Ort::Value without copying, the ORT
// call, and outputs copied back into parity Tensors (or wrapped, borrowed).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "ort/ort_error.h"
#include "ort/run_count.h"
#include "ort/run_limits.h"
#include "ort/session.h"
#include "ort/session_impl.h"
#include "ort/value_conversion.h"

namespace parity::ort {
namespace {

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

}  // namespace

bool IsRunTimeout(const Error& e) { return e.message().find(kRunTimedOut) != std::string::npos; }

Result<TensorSet> Session::Run(const TensorSet& inputs, const std::vector<std::string>& output_names,
                               OutputBuffers buffers, double timeout_s) const {
  PARITY_RETURN_IF_ERROR(CheckInputs(impl_->inputs, inputs));

  std::vector<std::string> fetch = output_names.empty() ? this->output_names() : output_names;
  for (const std::string& name : fetch) {
    bool known = false;
    for (const TensorInfo& info : impl_->outputs) known = known || info.name == name;
    if (!known)
      return InvalidArgument(fmt::format("unknown output '{}' (model outputs: {})", name,
                                         fmt::join(this->output_names(), ", ")));
  }

  try {
    // Feed in the model's input order; `inputs` may list them in any order.
    std::vector<const char*> input_ptrs;
    std::vector<Ort::Value> values;
    for (const TensorInfo& info : impl_->inputs) {
      PARITY_ASSIGN_OR_RETURN(Ort::Value value, WithContext(ToOrtValue(*inputs.Find(info.name)),
                                                            fmt::format("input '{}'", info.name)));
      input_ptrs.push_back(info.name.c_str());
      values.push_back(std::move(value));
    }
    std::vector<const char*> output_ptrs;
    for (const std::string& name : fetch) output_ptrs.push_back(name.c_str());

    std::vector<Ort::Value> results;
    CountOrtRuns(1);
    RunLimits limits = CurrentRunLimits();
    if (timeout_s > 0) limits.seconds = timeout_s;
    if (limits.seconds > 0 || limits.memory_bytes > 0) {
      Ort::RunOptions options;
      Watchdog watchdog(options, limits);
      try {
        results = impl_->session.Run(options, input_ptrs.data(), values.data(), values.size(), output_ptrs.data(),
                                     output_ptrs.size());
      } catch (const Ort::Exception&) {
        watchdog.Stop();
        if (watchdog.fired() == Watchdog::Fired::kTime)
          return RuntimeError(fmt::format("the run {} {:g} s and was stopped", kRunTimedOut, limits.seconds));
        if (watchdog.fired() == Watchdog::Fired::kMemory)
          return RuntimeError(fmt::format("the run {} {} MiB and was stopped", kRunOverMemory,
                                          limits.memory_bytes >> 20));
        throw;
      }
    } else {
      results = impl_->session.Run(Ort::RunOptions{nullptr}, input_ptrs.data(), values.data(), values.size(),
                                   output_ptrs.data(), output_ptrs.size());
    }
    TensorSet out;
    for (size_t i = 0; i < results.size(); ++i) {
      // Copied, ORT's buffer goes as soon as parity holds its own: a run that
      // fetches every tensor (the layers against PyTorch) holds one copy, not
      // two. Borrowed, there is no second copy at all.
      PARITY_ASSIGN_OR_RETURN(
          Tensor t, WithContext(buffers == OutputBuffers::kBorrowed
                                    ? AdoptOrtValue(std::move(results[i]), impl_)
                                    : FromOrtValue(std::exchange(results[i], Ort::Value(nullptr))),
                                fmt::format("output '{}'", fetch[i])));
      PARITY_RETURN_IF_ERROR(out.Add(fetch[i], std::move(t)));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kRun));
  } catch (const std::exception& e) {
    return RuntimeError(fmt::format("running the ORT session: {}", e.what()));
  }
}

}  // namespace parity::ort
