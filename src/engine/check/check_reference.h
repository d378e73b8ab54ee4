// check's references (not a public header): the ORT reference (MODEL under
// another config, or --reference-model; in this process or on another ORT
// release in a child) and the PyTorch dumps. Which of them a check has is
// decided once, here, where they are built (check_reference*.cc); a stage
// asks them what they provide, or loops over them, and never tests which
// kind it was given (tests/house/test_reference_kinds.py counts such tests
// outside these files: 0).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "engine/check/check.h"
#include "engine/check/check_result.h"
#include "engine/load/reference_model.h"
#include "engine/locate/locate_result.h"
#include "engine/runner/run_results.h"
#include "engine/runner/runner.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {
struct LocateOptions;
}

namespace parity::check_internal {

struct Context;
struct Subject;
struct Judging;
struct NumericsFound;

// What the reference's pass cost: it runs while syntax loads the reference,
// and is counted as numerics' (RunCheck).
struct PassCost {
  double seconds = 0;
  int64_t runs = 0;  // ORT runs (ort/run_count.h)
};

// The ORT reference. One session alive at a time (issue 26: each holds a
// copy of the weights): the reference's session runs every sample and is
// timed while it alone is alive (RunReferencePass), its results kept here,
// and is released before the target's session is created.
struct ReferenceSide {
  bool loaded = false;                           // ORT loaded the reference
  // What it gave per sample; past options.reference_outputs_in_memory bytes a
  // sample's go to a scratch folder, read back when judged.
  RunResults results;
  std::vector<CheckFinding> runtime;             // its runtime.reference.* findings
  std::optional<PerformanceResult> performance;  // its latency, determinism
  PassCost pass;                                 // its time and ORT runs (a numerics cost)
  // Its ONNX Runtime when it is not the process's (a child process,
  // check_runtimes.cc): the check compares two releases. Set by LoadReference.
  std::optional<OrtFact> ort;

  // "[TARGET] vs [REFERENCE]", with " on onnxruntime VERSION" when the
  // reference runs another release.
  std::string Versus(const CheckOptions& o) const;
  // Why a passing check computes no layer curve because of where the
  // reference runs (another release: `parity locate --reference-ort-library`
  // compares node by node); empty when the curve can be computed.
  std::string CurveUnavailable() const;
  // Locates a failing sample against the reference: across the two runtimes
  // (LocateAcrossRuntimes) when it runs another release, else locate on the
  // reference's model and the target derived from it.
  Result<LocateReport> Locate(const Context& ctx, const Sample& sample, const LocateOptions& options) const;
};

// The PyTorch side: the dumps, and what the check keeps of its runs against them.
struct TorchSide {
  // --torch's dump, then each further one (--torch given again): every
  // sample of each is judged by its outputs; layers on the first's traced
  // sample only. Empty: PyTorch is not consulted.
  std::vector<TorchDump> dumps;
  // The first dump's traced sample's inputs (read before the stages): the
  // sample timed (TimingSample).
  std::optional<Sample> traced_sample;
  // The first dump's traced sample and what the target gave for it (the
  // numerics stage's run against PyTorch's outputs): with a dump, a passing
  // check's curve is of this sample (check_locate.cc).
  std::optional<Sample> curve_sample;
  std::optional<TensorSet> target_outputs;
  // What the every-tensor run against PyTorch gave for the plan's surviving
  // tensors and the outputs (unfused reference config, the dump's inputs):
  // the curve's reference when its sample is those inputs.
  std::optional<KeptValues> kept_reference;
  // The decode steps the generation stage judged against PyTorch (each
  // step's inputs as fed, "generation:stepK"): judged samples for the
  // control-flow coverage (a merged decoder's cache branch runs there only).
  std::vector<Sample> generation_samples;

  // The dump whose traced sample is judged layer by layer, whose signature
  // and sizes the check reads: the first (none without a dump).
  std::span<const TorchDump> Traced() const;
  // The sizes of the traced sample by the model's dim symbols: the witnesses
  // that keep or drop a size relation (sample_gen.h); none without a dump.
  std::map<std::string, int64_t> TracedDims(const ModelInfo& info) const;
  // The curve's session count: the target's saved plan and the observed
  // reference and target; with a dump the reference's tensors come from the
  // run against PyTorch's layers (ReuseForCurve).
  int CurveSessions() const;
};

// Whose judgments show a fault in a branch (check_control_flow.cc): with a
// PyTorch dump, PyTorch's own samples (an export's fault shows nowhere else);
// without one, the check's samples judged against the ORT reference.
struct BranchJudge {
  std::string name;  // "PyTorch" or "the reference"
  // Whether a check sample judged against the ORT reference counts.
  bool counts_check_samples = true;
  // How the samples that took a branch but do not count were judged, and how
  // a user gives a judged sample for a branch or a Loop body (HowToJudge).
  std::string others_judged, hint_branch, hint_loop;
};
BranchJudge BranchJudgeOf(const TorchSide& torch);

// Built once, before any stage (check_reference_load.cc): check's reference
// kinds validated (a config or a model in ORT; PyTorch dumps), the
// --reference-model loaded (its file hashed in `reference_sha` when a dump's
// provenance is checked), the dumps read and checked against MODEL, the
// traced sample read. Returns what a reader should know about the dumps
// (the report's first notes: a changed model, the exporter's TracerWarnings,
// sizes PyTorch refused); a user's mistake is the error.
Status CheckReferenceKinds(const CheckOptions& o);
Result<std::vector<std::string>> LoadReferences(Context& ctx,
                                                std::optional<Sha256FileInBackground>& reference_sha);
// What the report says the check was run with.
CheckConfig ConfigOf(const CheckOptions& o);
// The model the samples are made for: MODEL, or the float --reference-model
// when MODEL takes a floating input in another dtype (a float16 model
// converted without keep_io_types): the samples are then float32 and cast
// for MODEL when it runs (RunOn).
const Model& SampleModel(const Subject& subject);
// The policy every judgment uses, decided once where the reference is read:
// against a float --reference-model each part of an output has a scale of
// its own (slice bands) and a derived model's outputs their derived bands;
// against MODEL itself a failing sample is judged again with its
// conditioning floor.
Judging JudgingOf(const Subject& subject, const TolerancePolicy& policy);
// The name an output judged against the ORT reference carries (OutputResult::against).
std::string OrtAgainst(const CheckOptions& o);

// `sample` as one of the check's sessions takes it: with --reference-model
// its floating inputs cast to the dtypes the session declares; else as it is.
Sample FedTo(const Subject& subject, const ort::Session& session, const Sample& sample);
// The same for a model run on a runner of its own (its declared dtypes).
Result<Sample> FedToModel(const Subject& subject, const Model& model, const Sample& sample);
// The target's outputs in the reference's dtypes: with --reference-model a
// float16 model's outputs are compared in the float model's dtype.
TensorSet AsReference(const Subject& subject, const TensorSet& test, const TensorSet& ref);

// The reference (check_reference.cc): which runtime runs it is decided
// once, from its config (MakeOrtRunner): ORT in this process, its one
// session created now (its load finding into `f`; null when ORT refuses the
// model), or another release in a child (ctx.reference.ort set; null when
// the library cannot be loaded: ctx.input_error, the user's mistake).
std::unique_ptr<Runner> LoadReference(Context& ctx, std::vector<CheckFinding>& f);
// Every sample on that runner's one kept session, into ctx.reference.results
// with each run's time; in this process the session is also timed (its
// runtime findings and performance; a child's latency is another process's),
// unless it serves the target too (one session for both): the runtime stage
// times it once, as the target's, and the pass leaves only the curve's
// estimate (its creation and its run of the first ordinary sample).
void PassReference(Context& ctx, Runner& reference);

// The sample latency and determinism are measured on (check_runtime.cc): the
// first dump's traced sample when there is a dump (the size PyTorch ran,
// the deployed size), else the first non-anomalous sample the reference did
// not refuse; null when there is none.
const Sample* TimingSample(const Context& ctx);
// What the numerics stage's run of `timed` on the target gave, determinism's
// first run: PyTorch's traced sample's, else the first ordinary sample's; null
// when it was not kept.
const TensorSet* TargetFirstRun(const Context& ctx, const Sample& timed);
// Why a passing check of this model should not compute its layer curve: too
// many nodes, the reference on another release, or its sessions estimated
// over options.curve_seconds from the reference's timing; empty when it should.
std::string CurveSkipReason(const Context& ctx);
// A passing check's curve from what the check already holds (check_locate.cc):
// with a dump the dump's traced sample, with the target's outputs for it and
// the reference's kept tensors; else `first` with the target's first
// outputs. Returns the sample to observe.
const Sample* ReuseForCurve(Context& ctx, const Sample& first, LocateOptions& options);
// The locate options of the ORT reference against the target: their configs,
// the policy, the models' labels.
LocateOptions ReferenceLocateOptions(const Context& ctx);
// With a derived model whose first divergence covers several nodes: where the
// two models first differ with every optimization off (numerics.locate.model_difference).
std::optional<CheckFinding> ModelDifference(const Context& ctx, const LocateReport& report, const Sample& sample,
                                            const LocateOptions& options);

// A step of the numerics stage that builds sessions of its own, run after
// the target's release (FinishNumerics): each reference contributes its own.
using DeferredStep = void (*)(Context&, NumericsFound&);
std::vector<DeferredStep> DeferredNumerics(const Context& ctx);

}  // namespace parity::check_internal
