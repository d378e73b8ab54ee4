// Internal to runtime_diff.cc and runtime_diff_culprit.cc: what the stages of
// LocateAcrossRuntimes hand each other.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/locate/runtime_diff.h"
#include "engine/run/fusion_map.h"
#include "engine/runner/runner.h"
#include "onnx/graph.h"

namespace parity::runtime_diff {

struct Side {
  std::unique_ptr<Runner> runner;
  FusionMap map;
  TensorSet untouched;  // the outputs of the plan run (nothing exposed)
  TensorSet values;     // the observed tensors and the outputs
};

struct Diff {
  const RuntimeLocateOptions& options;
  const Sample& sample;
  const Model* named = nullptr;      // node names written: the caller's model, or named_copy
  Model named_copy;
  std::filesystem::path model_path;  // what the runners load
  GraphView view;
  std::filesystem::path scratch;
  Side reference, target;
  int jobs = 0;
};

// The region of the first divergence and its local error on both runtimes;
// the repro when asked. Fills report.culprits (and report.repro).
Status MeasureCulprit(Diff& d, const FusedRegion& region, LocateReport& report);

// The region (of either plan) the culprit is measured on: the larger fused
// one producing `tensor`.
const FusedRegion* CulpritRegion(const Diff& d, const std::string& tensor);

}  // namespace parity::runtime_diff
