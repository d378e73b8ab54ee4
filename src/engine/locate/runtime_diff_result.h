// What LocateAcrossRuntimes (runtime_diff.h) adds to a locate report: the two
// runtimes that ran, as typed facts, and how their fused plans differ.
// Plain data, no JSON (report/json/locate_json.cc writes it as `runtimes`).
#pragma once

#include <string>
#include <vector>

#include "engine/runner/runner.h"

namespace parity {

// A fused node of one plan that the other plan does not make.
struct PlanFusion {
  std::string name;     // its main optimized node
  std::string op_type;  // the op types of its optimized nodes ("FusedConv", "LayerNormalization")
  std::vector<std::string> covers;  // original nodes
};

struct RuntimeComparison {
  RanWhat reference, target;  // both runtimes: version, library file, config
  size_t reference_fused = 0, target_fused = 0;  // fused nodes in each plan
  std::vector<PlanFusion> only_reference;  // made by the reference runtime only
  std::vector<PlanFusion> only_target;     // made by the target runtime only
  bool plans_identical() const { return only_reference.empty() && only_target.empty(); }
};

}  // namespace parity
