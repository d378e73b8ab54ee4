// What each stage of check returns (not a public header): RunCheck puts it
// into the report it builds, the one place the report is written
// (check.cc; tests/house/test_check_context.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/check/check_result.h"

namespace parity::check_internal {

// What the syntax stage found: its findings, and a note when one session
// serves both configs (check_reference_same_plan.h).
struct SyntaxFound {
  StageResult stage;
  std::vector<std::string> notes;
};
// What the numerics stage found (StageNumerics; FinishNumerics adds to it):
// its findings, each sample's result (the report's `samples`, before the
// robustness stage's), the top-1 and detection tallies, and from the layers
// against PyTorch their alignment and notes.
struct NumericsFound {
  StageResult stage;
  std::vector<SampleResult> samples;
  std::vector<Top1Agreement> top1;
  std::vector<DetectionAgreement> detections;
  std::optional<TorchComparison> alignment;
  std::vector<std::string> notes;
};
// What the runtime stage found: its findings, and each session's measure
// (the report's `performance`: the reference's, when timed, then the target's).
struct RuntimeFound {
  StageResult stage;
  std::vector<PerformanceResult> performance;
};
// What the robustness stage found: its findings, and each anomaly sample's
// result (into the report's `samples`, after the numerics stage's).
struct RobustnessFound {
  StageResult stage;
  std::vector<SampleResult> samples;
};
// What the generation stage found: nothing when no dump records a
// generation; else its findings, the first record's loop and, with more
// than one, every prompt's summary.
struct GenerationFound {
  std::optional<StageResult> stage;
  std::optional<GenerationResult> generation;
  std::vector<GenerationPrompt> prompts;
};
// What the TF32 probe found: its note (the report's `tf32_probe`, empty when
// it did not run) and, when TF32 is the cause, the arithmetic it names.
struct Tf32Probe {
  std::string note;
  std::optional<ArithmeticVerdict> tf32;
};
inline StageResult* StageOf(StageResult& stage) { return &stage; }
inline StageResult* StageOf(GenerationFound& found) { return found.stage ? &*found.stage : nullptr; }
template <class Found>
StageResult* StageOf(Found& found) { return &found.stage; }

// What localizing found: the findings that join the numerics stage, the
// layer curve, the per-layer quantization report, notes, and on a failure
// locate's report.
struct Localized {
  std::vector<CheckFinding> numerics;
  std::vector<LayerErrorPoint> layer_curve;
  std::optional<QuantReport> quant;
  std::vector<std::string> notes;
  std::optional<LocateReport> locate;
};

}  // namespace parity::check_internal
