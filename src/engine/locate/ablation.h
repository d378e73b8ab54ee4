// Which named ORT optimizer made a fused node, and what switching exactly
// that one off costs and buys (optimization.disable_specified_optimizers).
//
// For each optimizer that changed the target's graph (the session's captured
// log), the Ablator plans the target once more with only that optimizer off
// and records which fused regions are then gone. A culprit's producers are
// the optimizers whose removal makes its region disappear (first in ORT's
// order first). Plans are cached, so several culprits cost one session per
// optimizer in all.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/run/fusion_map.h"
#include "engine/runner/runner.h"
#include "onnx/graph.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

class Ablator {
 public:
  // References must outlive the Ablator. `sessions` counts created sessions.
  Ablator(const Model& model, const GraphView& view, RunConfig target, std::vector<std::string> optimizers,
          std::filesystem::path scratch, std::string label, int* sessions)
      : model_(model), view_(view), target_(std::move(target)), optimizers_(std::move(optimizers)),
        scratch_(std::move(scratch)), label_(std::move(label)), sessions_(sessions) {}

  // Optimizers whose switching off removes `region` (its signature no longer
  // appears in the plan), in the order ORT applied them.
  Result<std::vector<std::string>> Producers(const FusedRegion& region);
  const std::vector<std::string>& tried() const { return optimizers_; }

  // The target config with `optimizer` also switched off.
  RunConfig Without(const std::string& optimizer) const;

 private:
  Result<const std::set<std::string>*> SignaturesWithout(const std::string& optimizer);

  const Model& model_;
  const GraphView& view_;
  RunConfig target_;
  std::vector<std::string> optimizers_;
  std::filesystem::path scratch_;
  std::string label_;
  int* sessions_;
  std::map<std::string, std::set<std::string>> cache_;
};

// Median wall time of `runs` runs of `job` on `runner`, in ms (one warm-up
// run first); a job that keeps its session (RunnerJob::keep_session) times
// that session's runs.
Result<double> MedianLatencyMs(Runner& runner, const RunnerJob& job, const TensorSet& inputs, int runs);

}  // namespace parity
