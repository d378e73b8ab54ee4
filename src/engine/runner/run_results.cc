// RunResults (run_results.h): outputs kept in memory within a budget, the
// rest in a scratch folder of .npy files read back when asked for.
#include "engine/runner/run_results.h"

#include <fmt/format.h>

#include "core/tensor_files.h"
#include "ort/run_limits.h"
#include "ort/session.h"

namespace parity {
namespace {

size_t BytesOf(const TensorSet& tensors) {
  size_t n = 0;
  for (const auto& [name, t] : tensors) n += t.byte_size();
  return n;
}

}  // namespace

void RunResults::Add(const std::string& sample, Result<TensorSet> outputs, double run_ms) {
  in_memory_.erase(sample);
  on_disk_.erase(sample);
  run_ms_.insert_or_assign(sample, run_ms);
  if (outputs && kept_ + BytesOf(*outputs) > budget_) {
    if (!spill_) {
      if (auto dir = ScratchDir::Create("results_" + source_)) spill_.emplace(std::move(*dir));
    }
    if (spill_) {
      const auto folder = *spill_ / std::to_string(on_disk_.size());
      if (WriteNpyDir(folder, *outputs, Sync::kByFolder)) {  // scratch: never synced
        on_disk_.emplace(sample, folder);
        return;
      }
    }
    // It cannot go to disk: kept in memory.
  }
  if (outputs) kept_ += BytesOf(*outputs);
  in_memory_.insert_or_assign(sample, std::move(outputs));
}

Result<TensorSet> RunResults::Get(const std::string& sample) const {
  if (auto it = in_memory_.find(sample); it != in_memory_.end()) return it->second;
  auto spilled = on_disk_.find(sample);
  if (spilled == on_disk_.end())
    return InternalError(fmt::format("sample '{}' was not run on the {}", sample, source_));
  PARITY_ASSIGN_OR_RETURN(TensorSet read, ReadNpyDir(spilled->second, /*decode_names=*/true));
  TensorSet ordered;  // in the run's order, as when kept in memory
  for (const auto& name : output_names_)
    if (const Tensor* t = read.Find(name)) ordered.Set(name, *t);
  return ordered;
}

RunResults::Status RunResults::StatusOf(const std::string& sample) const {
  if (on_disk_.contains(sample)) return Status::kRan;
  const auto it = in_memory_.find(sample);
  if (it == in_memory_.end()) return Status::kNotRun;
  if (it->second) return Status::kRan;
  if (ort::IsRunTimeout(it->second.error())) return Status::kTimedOut;
  if (ort::IsRunOverMemory(it->second.error())) return Status::kOverMemory;
  return Status::kRefused;
}

bool RunResults::Failed(const std::string& sample) const {
  const auto it = in_memory_.find(sample);
  return it != in_memory_.end() && !it->second;
}

double RunResults::RunMs(const std::string& sample) const {
  const auto it = run_ms_.find(sample);
  return it != run_ms_.end() ? it->second : 0;
}

const TensorSet* RunResults::InMemory(const std::string& sample) const {
  const auto it = in_memory_.find(sample);
  return it != in_memory_.end() && it->second ? &*it->second : nullptr;
}

std::string_view RunStatusName(RunResults::Status status) {
  switch (status) {
    case RunResults::Status::kNotRun: return "not run";
    case RunResults::Status::kRan: return "ran";
    case RunResults::Status::kRefused: return "refused";
    case RunResults::Status::kTimedOut: return "timeout";
    case RunResults::Status::kOverMemory: return "over memory";
  }
  return "?";
}

}  // namespace parity
