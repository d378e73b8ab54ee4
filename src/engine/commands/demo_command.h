// parity demo's engine side (issue 55: the CLI only parses and wires): the
// built-in models it writes, the fault it plants, its checks run with the
// report naming the models where they will be once the staged folder is
// committed, and whether the planted fault was found.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/staged_dir.h"
#include "core/status.h"
#include "engine/check/check.h"
#include "onnx/model.h"

namespace parity {

inline constexpr std::string_view kDemoPlantedNode = "/layer2/1/conv2/Conv";
inline constexpr double kDemoPlantedScale = 1.02;

// Everything a demo folder holds besides its marker (CheckReplaceableOutputDir).
std::span<const std::string_view> DemoFiles();

// One check of the demo: its title, its folder's name, its options.
struct DemoCase {
  std::string title;
  std::string name;
  CheckOptions options;
};

// 1. The seed's Conv+BN+ReLU (written to `models`), checked as deployed (ORT
// `all` against the unfused run) with `runs` timed runs: it should pass.
Result<DemoCase> HealthyDemoCase(const std::filesystem::path& models, int runs);

// 2. A residual CNN and its copy with kDemoPlantedNode's weights scaled by
// kDemoPlantedScale (both written to `models`), checked against the healthy
// model under `healthy`'s options: it should fail, naming the node.
Result<DemoCase> PlantedDemoCase(const std::filesystem::path& models, const CheckOptions& healthy);

// MODEL with the weights of `node` scaled by `factor` (kInternal: no such node).
Result<Model> PlantFault(const Model& model, const std::string& node, double factor);

// RunCheck, the report naming the models where they will be once `staged`
// is committed, not in its staging folder.
Result<CheckReport> CheckStaged(const CheckOptions& options, const StagedDir& staged);

// The planted case's report fails and names kDemoPlantedNode.
bool PlantedFaultFound(const CheckReport& report);

}  // namespace parity
