// Shared by the report writers' tests: a hand-built CheckReport with the
// awkward cases every writer must survive, and small process helpers.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include "core/testing/temp_dir.h"
#include "engine/check/check_result.h"

namespace parity::testing_util {

// A tensor name that breaks careless HTML, XML, JSON-in-script and shells.
inline const std::string kOddName =
    "out<b>&amp;\"quoted\" 'single' </script><script>alert(1)</script> /very/long/name/" +
    std::string(80, 'x');

// The parts of MakeSampleReport, one a section of the report.

// Five stages, all passing but numerics (fails on kOddName) and robustness (skipped).
inline std::vector<StageResult> SampleStages() {
  std::vector<StageResult> stages;
  const char* names[] = {"syntax", "signature", "numerics", "runtime", "robustness"};
  for (const char* n : names) {
    StageResult s;
    s.name = n;
    s.status = Verdict::kPass;
    s.seconds = 0.25;
    s.findings.push_back({std::string(n) + ".ok", Verdict::kPass, "all good"});
    stages.push_back(s);
  }
  stages[2].status = Verdict::kFail;
  stages[2].findings.push_back(
      {"numerics.anomaly_nan." + kOddName, Verdict::kFail, "3 NaN mismatches; max_abs 0.5 > atol 1e-4 <&>"});
  stages[4].status = Verdict::kUnchecked;
  stages[4].findings.clear();
  return stages;
}

// A comparison of 1000 elements: exact when it passes, 12 mismatches (3 NaN) when it fails.
inline TensorComparison SampleComparison(const std::string& name, Verdict v) {
  TensorComparison c;
  c.name = c.test_name = name;
  c.status = v;
  c.tolerance.tolerance.atol = 1e-4;
  c.tolerance.tolerance.rtol = 1e-3;
  c.metrics.count = 1000;
  c.metrics.finite_pairs = 997;
  c.metrics.max_abs = v == Verdict::kFail ? 0.5 : 0.0;
  c.metrics.max_abs_index = {0, 7};
  c.metrics.max_abs_flat_index = 7;
  c.metrics.ref_at_max = 1.25;
  c.metrics.test_at_max = v == Verdict::kFail ? 1.75 : 1.25;
  c.metrics.cosine = v == Verdict::kFail ? 0.93 : 1.0;
  c.metrics.snr_db = v == Verdict::kFail ? 12.5 : std::numeric_limits<double>::infinity();
  c.metrics.mismatches = v == Verdict::kFail ? 12 : 0;
  c.metrics.nan_test = c.metrics.nan_mismatch = v == Verdict::kFail ? 3 : 0;
  c.metrics.histogram = {900, 0, 0, 0, 0, 0, 10, 20, 30, 15, 10, 5, 3, 4, 0, 0, 0};
  if (v == Verdict::kFail) c.reason = "12 of 1000 elements outside atol + rtol*|ref| (3 NaN)";
  return c;
}

// `typical` passes; `anomaly_nan` fails on kOddName.
inline std::vector<SampleResult> SampleSamples() {
  SampleResult typical;
  typical.name = typical.kind = "typical";
  typical.input_summary = "images float32 [1, 3, 64, 64]";
  typical.outputs.push_back({"logits", "onnx:disable", SampleComparison("logits", Verdict::kPass)});
  SampleResult nan;
  nan.name = "anomaly_nan";
  nan.kind = "anomaly";
  nan.input_summary = "images float32 [1, 3, 64, 64]";
  nan.status = Verdict::kFail;
  nan.behaviour = "nan/inf propagated";
  nan.outputs.push_back({"logits", "onnx:disable", SampleComparison("logits", Verdict::kPass)});
  nan.outputs.push_back({kOddName, "onnx:disable", SampleComparison(kOddName, Verdict::kFail)});
  return {typical, nan};
}

// 60 points crossing 1 at index 40, with a 0 at 5, +inf at 50 and kOddName at 45.
inline std::vector<LayerErrorPoint> SampleLayerCurve() {
  std::vector<LayerErrorPoint> curve;
  for (int i = 0; i < 60; ++i) {
    LayerErrorPoint p;
    p.index = i;
    p.tensor = i == 45 ? kOddName : "/layer" + std::to_string(i) + "/Conv_output_0";
    p.op_type = i % 3 == 0 ? "Conv" : "Relu";
    p.error_ratio = i < 40 ? 1e-3 * (i + 1) : (i == 50 ? std::numeric_limits<double>::infinity() : 2.0 * i);
    if (i == 5) p.error_ratio = 0;
    p.max_abs = p.error_ratio * 1e-4;
    p.status = i < 40 ? Verdict::kPass : Verdict::kFail;
    curve.push_back(p);
  }
  return curve;
}

// Two configs of 50 runs each.
inline std::vector<PerformanceResult> SamplePerformance() {
  std::vector<PerformanceResult> out;
  for (int k = 0; k < 2; ++k) {
    PerformanceResult p;
    p.config = k == 0 ? "disable threads=1" : "all threads=1";
    p.session_creation_ms = 12.5 + k;
    p.peak_rss_bytes = 150 << 20;
    p.deterministic = k == 0;
    for (int i = 0; i < 50; ++i)
      p.latency.samples_ms.push_back((k == 0 ? 4.0 : 2.5) + 0.01 * ((i * 37) % 50));
    p.latency.runs = 50;
    p.latency.mean_ms = p.latency.p50_ms = k == 0 ? 4.25 : 2.75;
    p.latency.p95_ms = p.latency.p99_ms = p.latency.max_ms = k == 0 ? 4.49 : 2.99;
    p.latency.min_ms = k == 0 ? 4.0 : 2.5;
    out.push_back(p);
  }
  return out;
}

// A locate report whose first divergence is kOddName inside a fused node.
inline LocateReport SampleLocate() {
  LocateReport l;
  l.first_divergence = FirstDivergence{.tensor = kOddName,
                                       .producer = "/layer45/Conv",
                                       .fused_node = "FusedConv_45",
                                       .op_type = "FusedConv",
                                       .covers = {"/layer45/Conv", "/layer45/Relu"}};
  l.culprits.push_back(
      LocateCulprit{.fused_node = "FusedConv_45",
                    .op_type = "FusedConv",
                    .fused = true,
                    .covers = {"/layer45/Conv", "/layer45/Relu"},
                    .local = {.tensor = kOddName, .max_abs = 0.5, .score = 5000.0, .pass = false},
                    .inherited = {.tensor = "/layer44/out", .max_abs = 1e-7, .score = 0.001, .pass = true}});
  return l;
}

// One aligned module and one folded away.
inline TorchComparison SampleAlignment() {
  TorchComparison c;
  LayerVerdict conv, bn;
  conv.alignment = {.module = "layer1.0.conv1",
                    .file = "layer_0001_layer1.0.conv1.npy",
                    .tensor = "/layer1/conv1/Conv_output_0",
                    .how = AlignHow::kName};
  bn.alignment = {.module = "layer1.0.bn1",
                  .file = "layer_0002_layer1.0.bn1.npy",
                  .how = AlignHow::kNone,
                  .reason = "folded into the Conv before it"};
  c.layers = {conv, bn};
  return c;
}

// The model's facts: one input, one output, opset 17.
inline CheckedModel SampleModel() {
  CheckedModel m{.path = "/models/resnet & co.onnx", .sha256 = std::string(64, 'a')};
  m.info.opsets = {{"", 17}};
  m.info.inputs = {{.name = "images", .type = {.dtype = DType::kFloat32, .dtype_name = "float32"}}};
  m.info.outputs = {{.name = "logits", .type = {.dtype = DType::kFloat32, .dtype_name = "float32"}}};
  return m;
}

// Two samples: `typical` passes; `anomaly_nan` fails on kOddName with NaN
// mismatches (and +inf snr on its passing output); a layer curve of 60
// points crossing 1 at index 40; two performance configs of 50 runs; a
// locate report and an alignment; one failed numerics finding.
inline CheckReport MakeSampleReport() {
  CheckReport r;
  r.tool_version = "0.1.0-test";
  r.env = Environment{.parity_version = "0.1.0-test", .ort_version = "1.29.0", .cpu = "Test CPU <x86>", .os = "Linux"};
  r.model = SampleModel();
  r.config = CheckConfig{.target = {.opt_level = OptLevel::kAll, .intra_op_threads = 1}};
  r.overall = Verdict::kFail;
  r.stages = SampleStages();
  r.samples = SampleSamples();
  r.layer_curve = SampleLayerCurve();
  r.performance = SamplePerformance();
  r.locate = SampleLocate();
  r.alignment = SampleAlignment();
  return r;
}

// Runs a shell command; returns its exit status and fills `output` (stdout).
inline int RunCommand(const std::string& command, std::string* output) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0)
    if (output) output->append(buf, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Single-quotes `s` for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace parity::testing_util
