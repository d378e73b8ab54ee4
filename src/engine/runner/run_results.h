// RunResults: what one source of values (a Runner, a session) produced for
// each sample (Polygraphy's RunResults): each sample's outputs or the error
// of its run, and so its status (ran, refused, stopped at the time or memory
// limit). Past a memory budget a sample's outputs go to a scratch folder of
// .npy files instead (many samples of a model with large outputs: an LM's
// logits) and are read back, in the run's output order, when asked for.
//
// check keeps its reference's pass in one (engine/check); dataset and
// generation may hold theirs the same way. Thread-compatible.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/scratch_dir.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

class RunResults {
 public:
  // What became of one sample's run.
  enum class Status { kNotRun, kRan, kRefused, kTimedOut, kOverMemory };

  // `source`: what ran, in errors ("reference"); `memory_budget`: bytes of
  // outputs kept in memory before further samples' go to disk.
  explicit RunResults(std::string source = "run", size_t memory_budget = static_cast<size_t>(-1))
      : source_(std::move(source)), budget_(memory_budget) {}

  // The run's output names in its order: the order a spilled sample's
  // outputs are read back in.
  void SetOutputNames(std::vector<std::string> names) { output_names_ = std::move(names); }
  const std::vector<std::string>& output_names() const { return output_names_; }

  // Keeps what `sample`'s run gave (replacing an earlier one): its outputs
  // in memory within the budget, else on disk (in memory when they cannot
  // be written there), or its error; and how long the run took (`run_ms`,
  // wall time around it; 0: not timed), as Polygraphy's IterationResult
  // keeps its runtime.
  void Add(const std::string& sample, Result<TensorSet> outputs, double run_ms = 0);

  // What `sample`'s run gave, read back when on disk; kInternal when it was
  // not run here.
  Result<TensorSet> Get(const std::string& sample) const;

  Status StatusOf(const std::string& sample) const;
  // Whether `sample`'s run gave an error (refused, or stopped at a limit).
  bool Failed(const std::string& sample) const;
  // Its outputs when they are kept in memory; null when on disk, failed or
  // not run.
  const TensorSet* InMemory(const std::string& sample) const;

  // How long `sample`'s run took in milliseconds; 0 when it was not timed or
  // not run.
  double RunMs(const std::string& sample) const;

  size_t size() const { return in_memory_.size() + on_disk_.size(); }
  size_t spilled() const { return on_disk_.size(); }

 private:
  std::string source_;
  size_t budget_;
  size_t kept_ = 0;  // bytes of outputs in memory
  std::map<std::string, Result<TensorSet>> in_memory_;
  std::optional<ScratchDir> spill_;
  std::map<std::string, std::filesystem::path> on_disk_;
  std::map<std::string, double> run_ms_;
  std::vector<std::string> output_names_;
};

// "ran", "refused", "timeout", "over memory", "not run".
std::string_view RunStatusName(RunResults::Status status);

}  // namespace parity
