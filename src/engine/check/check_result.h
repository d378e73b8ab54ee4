// The result of `parity check` as plain data: what every writer in report/
// (console, JSON, JUnit, HTML) renders, one file each. Built by
// engine/check/check.cc. Schema of the JSON form: docs/report.schema.json
// (parity.check/1). Header only, without ONNX or ORT, so the writers compile
// without them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_sets.h"

namespace parity {

enum class Status3 { kPass, kFail, kSkipped };
// "PASS", "FAIL", "SKIPPED"
inline std::string_view Status3Name(Status3 s) {
  switch (s) {
    case Status3::kPass: return "PASS";
    case Status3::kFail: return "FAIL";
    case Status3::kSkipped: return "SKIPPED";
  }
  return "?";
}

struct CheckFinding {
  std::string id;        // stable test id, e.g. "signature.output.logits.dtype"
  Status3 status = Status3::kPass;
  std::string message;   // one line a person reads
};

// syntax, signature, numerics, runtime, robustness.
struct StageResult {
  std::string name;
  Status3 status = Status3::kSkipped;
  std::vector<CheckFinding> findings;
  double seconds = 0;
};

// One output of one sample judged against one reference.
struct OutputResult {
  std::string output;
  std::string against;  // "onnx:disable" (the unfused run) or "torch" (the PyTorch dump)
  TensorComparison comparison;
};

struct SampleResult {
  std::string name;  // "typical", "boundary_batch4", "anomaly_nan", ...
  std::string kind;  // "typical", "boundary", "anomaly", "user"
  std::string input_summary;  // "images float32 [4, 3, 64, 64]"
  Status3 status = Status3::kPass;
  std::string error;      // what ORT raised, when it did
  std::string behaviour;  // anomalies: "raised", "nan/inf propagated", "outputs finite", ...
  std::vector<OutputResult> outputs;
};

struct LatencyStats {
  int runs = 0;
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, p99_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;  // every timed run, for the distribution plot
};

struct PerformanceResult {
  std::string config;  // label, e.g. "all threads=1"
  double session_creation_ms = 0;
  LatencyStats latency;
  int64_t peak_rss_bytes = 0;
  bool deterministic = true;  // two runs bitwise identical
};

// One point of the per-layer error curve: observed tensors in topological
// order, the target's error against the reference relative to tolerance.
struct LayerErrorPoint {
  int64_t index = 0;
  std::string tensor;
  std::string producer;  // the original node producing the tensor
  std::string op_type;   // that node's op type
  double max_abs = 0;
  double error_ratio = 0;  // the error score (compare/judge.h): max_abs / (atol + rtol*max|ref|)
  Verdict status = Verdict::kUnchecked;
};

struct CheckReport {
  std::string tool_version;
  nlohmann::json env;     // EnvironmentToJson
  nlohmann::json model;   // path, sha256, opsets, inputs, outputs
  nlohmann::json config;  // reference and target configs
  Status3 overall = Status3::kPass;
  std::vector<StageResult> stages;
  std::vector<SampleResult> samples;
  std::vector<PerformanceResult> performance;
  std::vector<LayerErrorPoint> layer_curve;
  nlohmann::json locate;     // the locate report when a numeric check failed; null otherwise
  nlohmann::json alignment;  // PyTorch layer alignment when --torch was given; null otherwise
  std::vector<std::string> notes;  // what a reader should know about the inputs (a dump made from another export)

  // Every failed finding, as (id, reason).
  std::vector<CheckFinding> FailedTests() const {
    std::vector<CheckFinding> failed;
    for (const auto& stage : stages)
      for (const auto& f : stage.findings)
        if (f.status == Status3::kFail) failed.push_back(f);
    return failed;
  }
};

}  // namespace parity
