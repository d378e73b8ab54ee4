// `parity bench`: latency and memory per config, and for each fusion ORT
// applies, the speed it buys next to the precision it costs.
//
// All configs run in this process, one after another, each on the session
// its own Runner keeps (engine/runner/runner.h; the runner and its session
// destroyed before the next is created). Memory is reported two
// ways (docs/bench.md): the session's own resident growth, and the
// process's peak RSS after the config (a high-water mark that includes the
// configs measured before it — put the config you care about first, or run
// one config per invocation, for an unshared peak).
#pragma once

#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/bench/latency.h"
#include "onnx/model.h"
#include "engine/bench/bench_result.h"

namespace parity {

struct BenchConfig {
  std::string label;
  RunConfig config;
};

struct BenchOptions {
  std::vector<BenchConfig> configs;  // measured in this order
  // Label of the config every other one's outputs are compared with; empty:
  // the first config at opt level `disable` with nothing else changed, if any.
  std::string reference;
  LatencyOptions latency;
  // Also measure `all` with each optimizer that changed the graph switched
  // off (the `all` config of `configs`, else RunConfig at opt all).
  bool fusions = false;
};

// The configs "disable,basic,extended,all" as BenchConfigs (kInvalidArgument
// naming an unknown level).
Result<std::vector<BenchConfig>> ConfigsFromLevels(const std::string& comma_separated);

// bench's config set: the levels `levels` ("disable,all"; "" for none), then,
// when `on_providers` names providers, each level again on them beside the
// CPU ones (the CPU `disable` stays the reference every output is compared
// with). `on_providers` is the --providers/--provider-option overlay as the
// CLI parsed it, or its error, reported only when a level takes it.
// Errors: ConfigsFromLevels's, the overlay's.
Result<std::vector<BenchConfig>> BenchConfigSet(const std::string& levels, const Result<RunConfig>& on_providers);

// What a measured report means for the exit: OK when every config ran; a
// config whose model is bad input for it (an opset newer than ORT) is
// kInvalidArgument with its error ("MODEL [CONFIG]: ..."), any other failed
// config kRuntime naming it (its error is in the report's table).
Status BenchStatus(const BenchReport& report);

// Measures every config on `sample`. A config whose session cannot be
// created or whose run fails is reported with its error and the others
// still run. Errors: kInvalidArgument when there is no config, the
// reference label names none, or a config runs on another ORT release than
// the process's (its ort_library: bench times sessions in this process; a
// library that cannot be loaded is the same error).
// `model_label` names the model in messages and the report.
Result<BenchReport> RunBench(const Model& model, const std::string& model_label, const Sample& sample,
                             const BenchOptions& options);

}  // namespace parity
