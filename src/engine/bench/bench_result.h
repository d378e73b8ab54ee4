// What `parity bench` measured, as plain data: the engine (engine/bench/bench.h)
// fills it; report/bench_report.h writes it (schema parity.bench/1, documented
// in docs/bench.md). Plain data, without ONNX, ORT or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "engine/bench/latency_stats.h"
#include "engine/run/environment.h"

namespace parity {

// One config measured.
struct BenchConfigResult {
  std::string label;      // "disable", "all", "all -ConvActivationFusion", a --config file's label
  RunConfig config;
  double session_creation_ms = 0;
  LatencyStats latency;
  // The process's peak RSS (high-water mark) after this config ran: it
  // includes every config measured before it. See docs/bench.md.
  int64_t peak_rss_bytes = 0;
  // Resident memory the session added: RSS with the session created and run,
  // minus RSS before creating it.
  int64_t session_rss_bytes = 0;
  // Largest |difference| over every output against the reference config;
  // -1 when there is no reference or a side failed.
  double max_abs_vs_reference = -1;
  bool nonfinite_mismatch = false;  // NaN/Inf where the reference has none, or the reverse
  std::string error;                // set when creation or a run failed; the numbers are then empty
  bool bad_input = false;           // the error is the model's (kInvalidArgument at load: an opset newer than ORT)
};

// What one fusion buys and costs: the `all` config with one optimizer
// switched off, against `all`.
struct FusionTrade {
  std::string optimizer;
  // False when ORT still reported the optimizer changing the graph with it
  // disabled (ORT ignores unknown names silently; container names such as
  // "Level1_RuleBasedTransformer" may not be switchable).
  bool switched_off = true;
  BenchConfigResult without;  // the `all -OPTIMIZER` run
  double speed_ms = 0;        // p50 without - p50 with: > 0 means the fusion saves time
  double precision_cost = 0;  // max_abs with - max_abs without (vs the reference): > 0 means it costs
};

struct BenchReport {
  std::string tool_version;
  OrtFact ort;  // which ONNX Runtime ran
  std::string model;
  std::string sample;         // the sample's name
  std::string input_summary;  // "input float32 [1, 3, 64, 64]"
  std::string reference;      // label of the reference config ("disable"), "" when none
  int warmup = 0;
  int runs = 0;
  double max_seconds = 0;
  std::vector<BenchConfigResult> configs;
  bool fusions_requested = false;
  std::string fused_config;  // label of the config fusions were switched off from ("all")
  std::vector<FusionTrade> fusions;
};

}  // namespace parity
