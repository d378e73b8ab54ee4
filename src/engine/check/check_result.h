// The result of `parity check` as plain data: what every writer in report/
// (console, JSON, JUnit, HTML) renders, one file each. Built by
// engine/check/check.cc. Schema of the JSON form: docs/report.schema.json
// (parity.check/1). Typed data only (no JSON inside): report/ turns it into
// every format. Includes no ONNX, protobuf or ORT header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_sets.h"
#include "compare/tolerance.h"
#include "core/run_config.h"
#include "engine/bench/latency_stats.h"
#include "engine/generate/generation_result.h"
#include "engine/inputs/sample_gen.h"
#include "engine/locate/locate_result.h"
#include "engine/quant/detections.h"
#include "engine/quant/top1.h"
#include "engine/run/arithmetic.h"
#include "engine/run/control_flow_report.h"
#include "engine/run/environment.h"
#include "engine/torch/torch_compare.h"
#include "onnx/inspect.h"
#include "ort/session.h"

namespace parity {

struct CheckFinding {
  std::string id;        // stable test id, e.g. "signature.output.logits.dtype"
  Verdict status = Verdict::kPass;
  std::string message;   // one line a person reads
  // A warning: true, but the numbers are not affected (SPEC "warning"). It
  // passes, unless the check is --strict: then its status is kFail.
  bool warning = false;
};

// syntax, signature, numerics, runtime, robustness.
struct StageResult {
  std::string name;
  Verdict status = Verdict::kUnchecked;
  std::vector<CheckFinding> findings;
  double seconds = 0;
};

// How many times ONNX Runtime ran a model in one step of a check
// (ort/run_count.h): a stage, the reference's pass, the TF32 probe, the
// layer curve and locate, the control-flow probe. A value produced twice
// shows here (issue 55).
struct StepRuns {
  std::string step;  // "reference pass", a stage's name, "tf32 probe", "layer curve / locate", "control flow"
  int64_t runs = 0;
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
  Verdict status = Verdict::kPass;
  std::string error;      // what ORT raised, when it did
  std::string behaviour;  // anomalies: "raised", "nan/inf propagated", "outputs finite", "timeout"
  std::vector<OutputResult> outputs;
  // A run of the sample passed one of the check's limits and was stopped
  // (docs/inputs.md "Bounded runs"): the time limit, or with `over_memory`
  // the memory limit (ort/run_limits.h). Never PASS; its status is SKIPPED
  // (the reference's run, a generated sample) or FAIL, every format says
  // TIMEOUT or OVER MEMORY (StatusWord), and no later stage runs it again.
  bool timed_out = false;
  bool over_memory = false;  // with timed_out: stopped at the memory limit

  // "TIMEOUT" / "OVER MEMORY" for a stopped sample, else CheckVerdictName(status).
  std::string_view StatusWord() const {
    return timed_out ? (over_memory ? "OVER MEMORY" : "TIMEOUT") : CheckVerdictName(status);
  }
};

struct PerformanceResult {
  std::string config;  // label, e.g. "all threads=1"
  std::string sample;  // the sample timed: the dump's traced one ("torch") when there is a dump
  std::string inputs;  // its shapes: "images float32 [1, 3, 640, 640]"
  double session_creation_ms = 0;
  LatencyStats latency;
  int64_t peak_rss_bytes = 0;
  // The CUDA arena's peak (ort::Session::CudaPeakBytes) for a session on the
  // CUDA EP; nullopt elsewhere.
  std::optional<int64_t> gpu_peak_bytes;
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

// The model checked: its facts (onnx/inspect.h) and where it came from.
struct CheckedModel {
  std::string path;
  std::optional<std::string> sha256;  // of the file; none when it could not be read
  ModelInfo info;
  std::string reference_model;  // --reference-model's path; empty without one
};

// What the check ran with.
struct CheckConfig {
  RunConfig reference, target;
  TolerancePolicy tolerance;
  std::string samples;  // the inputs' path, or "generated"
  uint32_t seed = 0;    // of generated samples
  std::string torch;    // the PyTorch dump's folder; empty without one
  std::vector<std::string> more_torch;  // more dumps (--torch given again)
};

// --model-explorer DIR (report/overlays/model_explorer.h): where the node-data files
// went and how to open them, for the HTML report's links.
struct ModelExplorerLinks {
  std::string dir;       // as given
  std::string href_dir;  // the folder relative to the report's folder (or absolute)
  std::vector<std::string> files;     // file names in the folder
  std::vector<std::string> commands;  // "model-explorer MODEL --node_data_paths=...", one per graph
};

// What a check's verdict rests on (issue 50, SPEC "coverage"), counted once
// the stages ran (RunCheck's Decide). A PASS needs judged values: when
// `missing` is not empty the verdict is NOT JUDGED (exit 4), never PASS.
struct CheckCoverage {
  int samples = 0;          // numerics samples (anomalies apart), against ORT and against PyTorch
  int judged = 0;           // of them, judged: every output compared against its reference
  int refused = 0;          // refused by the reference or the model (not judged)
  int timed_out = 0;        // stopped at the time or memory limit (not judged)
  int outputs_judged = 0;   // output comparisons over the judged samples
  int layers_aligned = 0;   // PyTorch layers with an ONNX tensor judged (with --torch)
  int layers_unchecked = 0; // PyTorch layers left without one
  int generation_steps = 0; // decode steps replayed and judged (a generation dump)
  // Branches of an If that no judged sample took: a difference could hide there.
  std::vector<std::string> branches_unjudged;
  // Why the coverage cannot support a PASS; empty when it can.
  std::vector<std::string> missing;
};

struct CheckReport {
  std::string tool_version;
  // Each of these three is filled by RunCheck; none only in a report built
  // by hand (a test), which the writers render as empty.
  std::optional<Environment> env;  // the target's ONNX Runtime is env's (the process's)
  // The reference's, when another release ran it (--reference-ort-library,
  // in a child process): the check compares two runtimes.
  std::optional<OrtFact> reference_runtime;
  std::optional<CheckedModel> model;
  std::optional<CheckConfig> config;
  // PASS, FAIL, or kUnchecked: NOT JUDGED (coverage.missing says why).
  Verdict overall = Verdict::kPass;
  CheckCoverage coverage;
  std::vector<StageResult> stages;
  std::vector<StepRuns> ort_runs;  // per step, in the order they ran; steps that ran nothing left out
  std::vector<SampleResult> samples;
  std::vector<PerformanceResult> performance;
  std::vector<LayerErrorPoint> layer_curve;
  std::optional<LocateReport> locate;        // when a numeric check failed
  // --reference-model with a QDQ / float16 MODEL: its per-layer precision
  // against the float model (engine/quant/quant_layers.h, docs/quantized.md).
  std::optional<QuantReport> quant;
  // Classifier-like outputs: top-1 agreement of the target with the
  // reference over every sample of the numerics stage (engine/quant/top1.h).
  std::vector<Top1Agreement> top1;
  // Detector outputs: per-anchor best class and score (engine/quant/detections.h).
  std::vector<DetectionAgreement> detections;
  std::optional<TorchComparison> alignment;  // PyTorch layer alignment, when --torch was given
  // A dump with PyTorch's greedy decode: the loop on ORT step by step (engine/generate/).
  std::optional<GenerationResult> generation;
  // Every generation dump's loop when more than one was given (one prompt
  // each): the token-agreement distribution; empty with one dump or none.
  std::vector<GenerationPrompt> generation_prompts;
  // Which EP took which nodes of the target (ORT's assignment; empty for a
  // CPU-only target), and the arithmetic the worst failing output's error
  // is consistent with (engine/run/arithmetic.h), when an output failed.
  std::vector<ort::EpAssignment> target_assignment;
  std::optional<ArithmeticVerdict> arithmetic;
  // For a target on the CUDA EP with TF32 allowed and an output failing: the
  // re-run of that sample with use_tf32=0 and what it showed (check_tf32.cc);
  // empty when no probe ran.
  std::string tf32_probe;
  std::vector<std::string> notes;  // what a reader should know about the inputs (a dump made from another export)
  SampleNotes sample_notes;        // generated samples: the inputs' roles, the size relations kept
  // The model's If/Loop/Scan: which branches the samples took per If, the
  // bodies left unobserved (check_control_flow.cc); `present` false without.
  ControlFlowReport control_flow;
  std::optional<ModelExplorerLinks> model_explorer;  // with --model-explorer DIR

  // "PASS", "FAIL" or "NOT JUDGED": the word every format prints.
  std::string_view OverallWord() const { return OverallVerdictName(overall); }

  // Samples ORT refused or raised on without that being a failure: a
  // generated size outside the model's domain (SKIPPED), an anomaly that
  // raises under both configs (PASS). The failures and nothing else are
  // FailedTests(); these are listed apart in every format.
  std::vector<const SampleResult*> ExpectedRefusals() const {
    std::vector<const SampleResult*> out;
    for (const auto& s : samples)
      if (!s.error.empty() && s.status != Verdict::kFail) out.push_back(&s);
    return out;
  }

  // Every warning finding (passing, or failed under --strict).
  std::vector<CheckFinding> Warnings() const {
    std::vector<CheckFinding> out;
    for (const auto& stage : stages)
      for (const auto& f : stage.findings)
        if (f.warning) out.push_back(f);
    return out;
  }

  // Every failed finding, as (id, reason).
  std::vector<CheckFinding> FailedTests() const {
    std::vector<CheckFinding> failed;
    for (const auto& stage : stages)
      for (const auto& f : stage.findings)
        if (f.status == Verdict::kFail) failed.push_back(f);
    return failed;
  }
};

}  // namespace parity
