// Shared state of the check stages (engine/check*.cc); not a public header.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/check/check.h"
#include "engine/check/check_found.h"
#include "engine/check/check_reference.h"
#include "engine/inputs/sample_gen.h"
#include "engine/quant/quant_result.h"
#include "engine/run/environment.h"
#include "engine/run/optimized_plan.h"
#include "engine/runner/run_results.h"
#include "engine/runner/runner.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "ort/run_count.h"
#include "ort/run_limits.h"
#include "ort/session.h"

namespace parity::check_internal {

// One declared-shape contradiction (declared_shapes.cc): a symbol bound to
// two sizes at the same two places, with the first run that showed it.
struct DeclaredClash {
  std::string example;               // "'height' is 64 at 'x' axis 2 but 32 at 'y' axis 2 (sample 'typical')"
  std::vector<std::string> samples;  // every sample that showed it
};

// The model judged and the samples it is judged on, read once by RunCheck.
struct Subject {
  Model model;
  ModelInfo info;
  std::string label;  // the model's path, for messages
  std::vector<Sample> samples;
  // The model the ORT reference runs (check_reference.h): --reference-model, else `model`.
  ::parity::ReferenceModel reference;

  const Model& ReferenceModel() const { return reference.Of(model); }
  // MODEL as the target derived from --reference-model that locate compares
  // with it; null when MODEL is judged against itself at another config.
  const Model* Derived() const { return reference.DerivedFrom(model); }
  // The ORT reference's model's path, for messages: --reference-model's, else `label`.
  const std::string& ReferenceLabel() const { return reference.Label(label); }
};

// Declared-shape contradictions over every sample run on the target
// (declared_shapes.cc); the samples whose shapes were bound.
struct DeclaredShapes {
  std::map<std::string, DeclaredClash> clashes;
  std::vector<std::string> samples;
};

// The target. Its session is released before the steps that build sessions
// of their own (the layers against PyTorch, the shared tensors, locate).
struct TargetSide {
  // The Runner keeping its session: the planned one's (LoadTargetWithPlan),
  // else a Runner of the target's config; session() is null when ORT could
  // not load the model, or once released.
  std::unique_ptr<Runner> runner;
  // The plan ORT made for the target (its optimized model saved as the
  // deployed session was created, TargetPlanWanted), kept after the session
  // is released, with the target's outputs for the first non-anomalous
  // sample: a passing check's layer curve takes it over instead of loading
  // the model once more for it (LocateOptions::target_plan; issue 26).
  std::optional<ScratchDir> scratch;  // where ORT saved that optimized model
  std::optional<PlannedSession> plan;
  // What the target gave for FirstOrdinarySample (the numerics stage's run):
  // the first of the determinism check's two runs, and the untouched outputs
  // of `plan` for the layer curve.
  std::optional<TensorSet> first_outputs;
  double first_ms = 0;  // how long the run that gave first_outputs took (TargetRun; 0: not timed)
  // The numerics stage's run of FirstOrdinarySample: determinism's first, and
  // for a costly session maybe a timed one (check_latency.h).
  void KeepFirstRun(const TensorSet& outputs, double ms) {
    first_outputs = outputs;
    first_ms = ms;
  }
  DeclaredShapes declared;

  const ort::Session* session() const {
    return runner ? runner->kept_session() : nullptr;
  }
  // Before the steps that build sessions of their own: one copy of the weights at a time.
  void Release() {
    runner.reset();
  }
};

// The policy every judgment of the check uses: the user's, with the derived
// bands of a quantized / float16 MODEL's outputs against its
// --reference-model (engine/quant/output_tolerance.h), and those bands.
struct Judging {
  TolerancePolicy policy;
  std::vector<QuantOutputRule> output_rules;
  // Decided once where the reference is read (RunCheck). Against a float
  // --reference-model each part of an output has a scale of its own (slice
  // bands, compare/slice_bands.h); between two configs of MODEL every part's
  // error follows the scale of the computation that made it. Against MODEL
  // itself a failing sample is judged again with its conditioning floor; a
  // derived model's bands come from its own grid (input_range.h).
  bool slice_bands = false;
  bool conditioning = true;
};

// What the stages decided for the steps after them.
struct StageFlags {
  // Why a passing check computes no layer curve (said in a note), empty when
  // it does: decided once the reference has been timed, before the target
  // loads (its plan is saved for the curve only), CurveSkipReason.
  std::string curve_skipped;
  bool sessions_loaded = false;  // both sessions were created (set before the target's is released)
  // The numerics stage's steps left for after the target's release
  // (FinishNumerics): set when the per-sample and PyTorch-output checks ran.
  bool numerics_deferred = false;
  bool torch_outputs_read = false;  // the dump's traced sample was read (the layers can be compared)
  // The reference's pass ran on the target's session (check_reference_same_plan.h):
  // what it gave for a sample is the target's (TargetRun).
  bool one_session = false;
};

// The limits every run of the check obeys, and the runs they stopped.
struct RunBounds {
  // The time limit of each run (seconds; 0: none): the user's, or the default
  // once the reference's first ordinary sample has been timed (RunReferencePass).
  double sample_timeout_s = 0;
  // The samples a run of which was stopped at a limit (time or memory,
  // ort/run_limits.h): reported once (ReportStopped), never run again by a
  // later stage (the curve, locate, the control-flow probes).
  std::set<std::string> stopped;
};

struct Context {
  const CheckOptions& options;
  Subject subject;
  ReferenceSide reference;
  TargetSide target;
  TorchSide torch;
  Judging judging;
  StageFlags flags;
  RunBounds bounds;
  // A user's mistake found while a stage ran (a PyTorch dump none of whose
  // layers align with the model): RunCheck returns it instead of a report.
  std::optional<Error> input_error;
};

// Whether an error of a run is its memory limit, or the runtime running out
// of memory: no verdict on the model (docs/security.md: exit codes are honest).
inline bool IsOutOfMemory(const Error& e) { return ort::IsRunOverMemory(e); }

// Whether a run's error is its time limit (ort::IsRunTimeout).
inline bool IsTimeout(const Error& e) { return ort::IsRunTimeout(e); }
// A sample's behaviour when the reference's runtime (a child process, another
// ORT release) died before it gave its values: not judged, and the check
// cannot PASS on what it could not run (CoverageOf).
inline constexpr std::string_view kReferenceDied = "reference runtime died";

// Whether a run's error is one of its limits: time or memory.
inline bool IsStopped(const Error& e) { return IsTimeout(e) || IsOutOfMemory(e); }

// For a numerics sample a run of which was stopped at a limit (IsStopped):
// its result TIMEOUT or OVER MEMORY (the caller keeps it), a finding, and
// the sample into ctx.bounds.stopped: abandoned, never run again. The
// reference's run over a generated sample is outside what parity should
// have asked for: not judged (SKIPPED); over the user's sample, or the
// target's run alone: FAIL. Returns false (nothing done) when neither run
// was stopped (check_runtime.cc).
bool ReportStopped(Context& ctx, SampleResult& result, const std::string& id, const Result<TensorSet>& ref,
                   const Result<TensorSet>& test, std::vector<CheckFinding>& f);

// The first sample that is not an anomaly, nor refused by the reference, nor
// stopped at a limit: the one a passing check's layer curve and the
// shared-tensor comparison observe; null when there is none.
const Sample* FirstOrdinarySample(const Context& ctx);

// Whether two sets hold the same names with bitwise equal tensors.
bool AllBitwiseEqual(const TensorSet& a, const TensorSet& b);

// Runs `sample` on one of the check's sessions. With --reference-model the
// floating inputs are first cast to the dtypes the session declares (a
// float16 model converted without keep_io_types takes float16 inputs, its
// float model float32).
Result<TensorSet> RunOn(const Context& ctx, const ort::Session& session, const Sample& sample);
// The target's outputs for `sample`, whose reference gave `ref`: with one
// session for both (StageFlags::one_session) the reference's pass ran it on
// the target's session already, so that result, not a second run; else
// RunOn the target's session (check_reference_same_plan.cc).
// `run_ms`, when given: how long that run took (the pass's, with one session).
Result<TensorSet> TargetRun(const Context& ctx, const Sample& sample, const Result<TensorSet>& ref,
                            double* run_ms = nullptr);

// Two runtimes (check_runtimes.cc): a failing sample localized across both
// runtimes (LocateAcrossRuntimes).
Result<LocateReport> LocateOnTwoRuntimes(const CheckOptions& options, const Model& model,
                                         const TolerancePolicy& policy, const Sample& sample);

// The runtime stage's measure of one session (determinism, latency) on
// `sample`: its findings into `f`; none when a run failed. `first_run`: what
// the session already gave for `sample` (the check's own pass), the first
// of the two runs compared for determinism; null: both are run here.
std::optional<PerformanceResult> TimeSession(const Context& ctx, const char* which, const RunConfig& config,
                                             const ort::Session& session, const Sample& sample,
                                             std::vector<CheckFinding>& f, const TensorSet* first_run = nullptr);

// How far the target's own float32 evaluation moves each float output of
// `sample` when its float inputs move by one ulp (engine/inputs/perturb.h):
// |f(x') - f(x)| elementwise, the larger of two draws; nothing when a
// perturbed run fails (check_evidence.cc).
std::optional<TensorSet> ConditioningSpread(const Context& ctx, const Sample& sample,
                                            const TensorSet& outputs);
// A derived model's boundary sample beyond the range its numbers are judged
// on (engine/quant/input_range.h, `why`): judged for robustness, every
// output finite where the reference's is; its comparisons kept, unjudged,
// in `result`, which the caller keeps (check_evidence.cc).
void JudgeForRobustness(Context& ctx, SampleResult& result, const std::string& id, const std::string& why,
                        const SetComparison& cmp, std::vector<CheckFinding>& f);

// What the verdict rests on, counted from the finished report, and why it
// cannot support a PASS (CheckCoverage::missing): no sample judged (every
// one refused or stopped at the time limit), a branch no judged sample
// took (check_coverage.cc).
CheckCoverage CoverageOf(const CheckReport& r);
// Whether a sample's values were judged: it ran in time, has a verdict,
// and some output of it was compared (not robustness only); the one
// predicate coverage and branch coverage share (check_coverage.cc).
bool WasJudged(const SampleResult& s);

// The PyTorch layers that left their band by an isolated excursion only
// (engine/torch/layer_evidence.h): one note naming the first few, never a
// failed test (check_evidence.cc).
void ExcursionNotes(const TorchComparison& c, std::vector<std::string>& notes);

// Times each stage and counts each step's ORT runs (ort/run_count.h) into
// `report`'s `ort_runs` (check_meter.cc).
class StepMeter {
 public:
  StepMeter(Context& ctx, CheckReport& report) : ctx_(ctx), report_(report) {}
  // A stage that returns what it found (StageResult, RuntimeFound, ...):
  // its seconds into its StageResult, its runs counted.
  template <class Found>
  Found operator()(Found (*stage)(Context&)) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t runs = ort::OrtRuns();
    Found found = stage(ctx_);
    StageResult* s = StageOf(found);
    if (s == nullptr) return found;  // the stage did not apply (no generation recorded)
    s->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Count(s->name, runs);
    return found;
  }
  // A step that is no stage: its runs; what it returns, if anything.
  template <class F>
  auto Step(std::string_view name, F&& step) {
    const int64_t runs = ort::OrtRuns();
    if constexpr (std::is_void_v<std::invoke_result_t<F, Context&>>) {
      step(ctx_);
      Count(name, runs);
    } else {
      auto found = step(ctx_);
      Count(name, runs);
      return found;
    }
  }
  // The reference's pass is a numerics cost, made while syntax loaded it.
  void MoveReferencePass();

 private:
  void Count(std::string_view name, int64_t since);
  Context& ctx_;
  CheckReport& report_;
};

// Every stage returns what it found, which RunCheck puts into the report
// it builds; no stage holds the report.
SyntaxFound StageSyntax(Context& ctx);
StageResult StageSignature(Context& ctx);
NumericsFound StageNumerics(Context& ctx);
RuntimeFound StageRuntime(Context& ctx);
RobustnessFound StageRobustness(Context& ctx);
// The numerics stage's steps that build sessions of their own (the layers
// against PyTorch, the tensors shared with --reference-model), after the
// target's session is released: what they found joins the numerics stage's
// (its seconds included); none when the stage did not run its samples.
std::optional<NumericsFound> FinishNumerics(Context& ctx);
// Every sample of every dump against PyTorch, through the target's session,
// into `found`; numerics.torch.sizes when there is more than one. Returns
// false when the first dump's traced sample cannot be read (check_torch_numerics.cc).
bool CheckTorchOutputs(Context& ctx, const CompareOptions& compare, NumericsFound& found);
// Layer by layer against the first dump through the unfused reference
// (FinishNumerics, after the target's release): the alignment into `found`.
void CheckTorchLayers(Context& ctx, NumericsFound& found);
// With --reference-model: every tensor the two models share, both unfused,
// on the first non-anomalous sample (FinishNumerics; check_numerics.cc).
void CheckSharedTensors(Context& ctx, NumericsFound& found);
// Each compared tensor into `result` as an output judged `against`; a
// failing one fails the sample.
void AddOutputs(SampleResult& result, const SetComparison& cmp, const std::string& against);
// Binds the model's symbolic axes to one run's shapes (its inputs and the
// target's outputs) and records every symbol bound to two sizes.
void BindDeclaredShapes(DeclaredShapes& declared, const ModelInfo& info, const std::string& sample,
                        const TensorSet& inputs, const TensorSet& outputs);
// The one signature.declared_shapes finding for the model, from every run
// bound: a warning when some symbol named two sizes.
void AddDeclaredShapesFinding(const DeclaredShapes& declared, CheckReport& report);
// After the stages (check_locate.cc): the layer curve, and on a numeric
// failure among `judged` (the report's samples) the first diverging fused
// node.
Localized Localize(Context& ctx, const std::vector<SampleResult>& judged);
// The generation stage (check_generation.cc): a dump with PyTorch's greedy
// decode is replayed on ORT; its own session, made after the target's is released.
GenerationFound StageGeneration(Context& ctx);
// For a model with If/Loop/Scan (check_control_flow.cc): each sample's
// branches and unobserved bodies (the report's control_flow), with a note
// per branch no sample took; a branch counts as judged when `judged` (the
// report's samples) judged a sample that took it. Creates probe sessions:
// call after the target's is released.
ControlFlowReport ObserveControlFlow(const Context& ctx, const std::vector<SampleResult>& judged);

// For a CUDA target with TF32 allowed and a failing output among `samples`
// (the report's so far): re-runs the worst failing sample with use_tf32=0
// and names TF32 (Tf32Probe::tf32, the report's arithmetic) only if the
// error falls (check_tf32.cc). Runs on runners of its own (a session each):
// call after the target's is released.
Tf32Probe ProbeTf32(const Context& ctx, const std::vector<SampleResult>& samples);

// One finding line.
inline CheckFinding Pass(std::string id, std::string message) {
  return {std::move(id), Verdict::kPass, std::move(message)};
}
inline CheckFinding Fail(std::string id, std::string message) {
  return {std::move(id), Verdict::kFail, std::move(message)};
}
inline CheckFinding Skip(std::string id, std::string message) {
  return {std::move(id), Verdict::kUnchecked, std::move(message)};
}
// A warning (CheckFinding::warning): passes unless the check is --strict.
inline CheckFinding Warn(std::string id, std::string message) {
  return {std::move(id), Verdict::kPass, std::move(message), true};
}

// A stage's status from its findings: FAIL if any failed, PASS if any
// passed, else SKIPPED.
Verdict StatusOf(const std::vector<CheckFinding>& findings);

// "images float32 [1, 3, 64, 64], ids int64 [1, 16]"
std::string DescribeTensors(const TensorSet& tensors);

}  // namespace parity::check_internal
