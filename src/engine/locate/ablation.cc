#include "engine/locate/ablation.h"

#include <algorithm>
#include <chrono>

#include "engine/run/optimized_plan.h"

namespace parity {

RunConfig Ablator::Without(const std::string& optimizer) const {
  RunConfig c = target_;
  c.disabled_optimizers.push_back(optimizer);
  c.optimized_model_path.clear();
  return c;
}

Result<const std::set<std::string>*> Ablator::SignaturesWithout(const std::string& optimizer) {
  if (auto it = cache_.find(optimizer); it != cache_.end()) return &it->second;
  const auto path = scratch_ / ("ablate_" + std::to_string(cache_.size()) + ".onnx");
  PARITY_ASSIGN_OR_RETURN(FusionMap map, PlanOf(model_, view_, Without(optimizer), label_, path));
  if (sessions_) ++*sessions_;
  std::set<std::string> signatures;
  for (const auto& r : map.regions) signatures.insert(RegionSignature(r));
  return &cache_.emplace(optimizer, std::move(signatures)).first->second;
}

Result<std::vector<std::string>> Ablator::Producers(const FusedRegion& region) {
  const std::string signature = RegionSignature(region);
  std::vector<std::string> producers;
  for (const auto& optimizer : optimizers_) {
    PARITY_ASSIGN_OR_RETURN(const std::set<std::string>* s, SignaturesWithout(optimizer));
    if (!s->contains(signature)) producers.push_back(optimizer);
  }
  return producers;
}

Result<double> MedianLatencyMs(Runner& runner, const RunnerJob& job, const TensorSet& inputs, int runs) {
  PARITY_RETURN_IF_ERROR(runner.Run(job, inputs));
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, runs); ++i) {
    const auto start = std::chrono::steady_clock::now();
    PARITY_RETURN_IF_ERROR(runner.Run(job, inputs));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace parity
