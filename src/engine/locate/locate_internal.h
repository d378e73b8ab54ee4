// Internal to locate.cc and locate_culprits.cc: what the culprit stages
// (4-6) read from the plan and the two traces (locate.cc builds it once the
// first divergence is known).
#pragma once

#include <unordered_map>

#include "engine/locate/locate.h"
#include "engine/run/optimized_plan.h"

namespace parity::locate_internal {

struct Context {
  const LocateOptions& options;
  const Sample& sample;
  const Model& reference_model;  // node names written
  const Model& target_model;     // node names written (may be the same object)
  const GraphView& reference_view;
  const GraphView& target_view;
  const PlannedSession& plan;  // the untouched target
  const std::filesystem::path& scratch;
  TensorSet reference_values;      // observed reference tensors and the sample's inputs
  TensorSet reference_outputs;     // the reference's final outputs
  TensorSet target_outputs;        // the untouched target's final outputs
  std::unordered_map<std::string, size_t> tensor_row;  // name -> index in report.tensors
  LocateReport& report;
};

// Measures the suspects' local and inherited errors, ranks them, runs the
// ablations and writes the reproduction. Fills report.culprits / report.repro.
Status FindCulprits(Context& ctx);

}  // namespace parity::locate_internal
