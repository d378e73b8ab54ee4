// RunCheck: loads what the stages need, runs them in order, then localizes
// a numeric failure (check_locate.cc) and assembles the report. The stages:
// check_static.cc (syntax, signature), check_numerics.cc, check_runtime.cc
// (runtime, robustness).
#include "engine/check/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/sha256.h"
#include "engine/check/check_internal.h"
#include "engine/check/model_summary.h"
#include "engine/inputs/input_check.h"
#include "engine/inputs/sample_gen.h"
#include "engine/load/samples.h"
#include "engine/locate/locate.h"
#include "engine/quant/output_tolerance.h"
#include "engine/run/environment.h"
#include "engine/run/tensor_source.h"
#include "engine/torch/dump_check.h"
#include "onnx/graph.h"
#include "ort/run_limits.h"
#include "ort/session.h"

namespace parity {
namespace check_internal {

Verdict StatusOf(const std::vector<CheckFinding>& findings) {
  bool any_pass = false;
  for (const auto& f : findings) {
    if (f.status == Verdict::kFail) return Verdict::kFail;
    any_pass |= f.status == Verdict::kPass;
  }
  return any_pass ? Verdict::kPass : Verdict::kUnchecked;
}

std::string DescribeTensors(const TensorSet& tensors) {
  std::string s;
  for (const auto& [name, t] : tensors)
    s += fmt::format("{}{} {} {}", s.empty() ? "" : ", ", name, DTypeName(t.dtype()), ShapeToString(t.shape()));
  return s;
}

}  // namespace check_internal

namespace {

using namespace check_internal;


// The samples given, else generated (what generating them decided into `notes`).
Result<std::vector<Sample>> LoadOrGenerateSamples(const Context& ctx, const Model& model, SampleNotes& notes) {
  const CheckOptions& o = ctx.options;
  if (!o.inputs_path.empty()) {
    return LoadSamplesFor(model, o.inputs_path, {.model_label = o.model_path});
  }
  SampleGenOptions gen = o.generate;
  gen.seed = o.seed;
  gen.traced_dims = ctx.torch.TracedDims(ctx.subject.info);
  return GenerateSamples(model, gen, &notes);
}

// The rule of each output's band goes into `quant`, made here when locate
// made none (a model past the layer curve's size).
void AttachOutputRules(const Judging& judging, CheckReport& r) {
  if (judging.output_rules.empty()) return;
  auto& q = r.quant;
  if (!q) {
    const bool half = judging.output_rules.front().rule == "float16_roundoff";
    q = QuantReport{.kind = half ? "float16" : "qdq", .rule = "the outputs' verdict bands only (no per-layer report)"};
  }
  q->outputs = judging.output_rules;
}

// The signature stage says "accepts" from the declared shapes, before any
// run; a sample ORT then refused was not accepted. Its finding follows the
// sample: FAIL with a failed sample, SKIPPED with an expected refusal.
void ReconcileAccepts(CheckReport& r) {
  for (auto& stage : r.stages) {
    if (stage.name != "signature") continue;
    for (auto& f : stage.findings) {
      if (f.status != Verdict::kPass || !f.id.starts_with("signature.accepts.")) continue;
      const std::string name = f.id.substr(std::string_view("signature.accepts.").size());
      for (const auto& s : r.samples)
        if (s.name == name && !s.error.empty()) {
          // A sample stopped at the time limit says nothing of its shapes: the numerics finding judges it.
          f.status = s.status == Verdict::kFail && !s.timed_out ? Verdict::kFail : Verdict::kUnchecked;
          if (s.timed_out)  // accepted, but not finished in time: not known to be accepted
            f.message = fmt::format("the declared shapes admit sample '{}'; its run was stopped at the time limit "
                                    "(TIMEOUT): {}", name, s.error);
          else
            f.message = fmt::format("the declared shapes admit sample '{}', but ONNX Runtime refused it{}: {}", name,
                                    s.status == Verdict::kFail ? "" : " (an expected refusal, not a failure)", s.error);
        }
    }
  }
}

// The SHA-256 of the model's file (the report's, and the dump's provenance
// check): computed once, while the model is parsed (Sha256FileInBackground);
// none when the file could not be read.
std::optional<std::string> ModelSha(Sha256FileInBackground& hash) {
  const auto& sha = hash.get();
  if (!sha) return std::nullopt;
  return *sha;
}

// For each dump whose export record names another file than the model (or,
// with --reference-model, the model it was derived from): a note, first
// among the report's notes. Each file is hashed once per check.
void ProvenanceNotes(const Context& ctx, Sha256FileInBackground& model_sha,
                     std::optional<Sha256FileInBackground>& reference_sha, CheckReport& r) {
  std::vector<std::string> shas;
  if (auto sha = ModelSha(model_sha)) shas.push_back(std::move(*sha));
  if (reference_sha)
    if (auto sha = ModelSha(*reference_sha)) shas.push_back(std::move(*sha));
  std::vector<std::string> notes;
  for (const TorchDump& d : ctx.torch.dumps)
    if (auto note = DumpProvenanceNote(d, ctx.options.model_path, shas); !note.empty()) notes.push_back(note);
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
}

CheckedModel ModelFacts(const Subject& subject, const std::optional<std::string>& sha256) {
  CheckedModel m{.path = subject.label, .sha256 = sha256, .info = subject.info};
  m.reference_model = subject.reference.ReportPath();
  return m;
}

}  // namespace

namespace {

// The arithmetic of the target's error against the ORT reference, named from
// evidence only (arithmetic.h): locate's, when it localized the failure (it
// emulates the formats and sees where the error starts); else what the
// derived model's kind or the target's config says of the failing output
// with the lowest SNR. None when no output failed against the ORT reference
// (a departure from PyTorch is the export's, not the config's arithmetic).
std::optional<ArithmeticVerdict> WorstArithmetic(const CheckReport& r, const RunConfig& target,
                                                 const ReferenceModel& reference, const std::string& ort) {
  if (r.locate && r.locate->first_divergence) return r.locate->arithmetic;
  const TensorComparison* worst = nullptr;
  for (const SampleResult& s : r.samples)
    for (const OutputResult& out : s.outputs)
      if (out.against == ort && out.comparison.status == Verdict::kFail &&
          std::isfinite(out.comparison.metrics.snr_db) &&
          (worst == nullptr || out.comparison.metrics.snr_db < worst->metrics.snr_db))
        worst = &out.comparison;
  if (worst == nullptr) return std::nullopt;
  ArithmeticEvidence evidence{.snr_db = worst->metrics.snr_db};
  if (r.quant && r.quant->kind != "float") evidence.derived = r.quant->kind == "float16" ? "fp16" : "int8";
  else evidence.model_differs = reference.ModelsDiffer();  // another float model: the models differ
  return DiagnoseArithmetic(evidence, target, CurrentEnvironment());
}

// Each stage's status from its findings (warnings failing under --strict),
// and the overall verdict: FAIL when a stage failed; else NOT JUDGED when
// the coverage cannot support a PASS (docs/errors.md: exit 4).
void Decide(CheckReport& r, bool strict) {
  if (strict)
    for (auto& stage : r.stages)
      for (auto& finding : stage.findings)
        if (finding.warning) finding.status = Verdict::kFail;
  for (auto& stage : r.stages) stage.status = StatusOf(stage.findings);
  r.coverage = CoverageOf(r);
  r.overall = r.coverage.missing.empty() ? Verdict::kPass : Verdict::kUnchecked;
  for (const auto& stage : r.stages)
    if (stage.status == Verdict::kFail) r.overall = Verdict::kFail;
}

// A model without outputs, or with outputs that are not tensors, cannot be
// judged: bad input, not a failed check (docs/security.md).
Status HasTensorOutputs(const Subject& subject) {
  if (subject.info.outputs.empty())
    return InvalidArgument(fmt::format("{}: the model has no outputs; there is nothing to check", subject.label));
  for (const auto& out : subject.info.outputs)
    if (out.type.dtype_name == "sequence" || out.type.dtype_name == "map" || out.type.dtype_name == "optional")
      return Unsupported(fmt::format("{}: output '{}' is a {}; parity compares tensor outputs only", subject.label,
                                     out.name, out.type.dtype_name));
  return {};
}

// The limits of every run of the check: `seconds`, and the memory limit asked
// for (or the default).
ort::RunLimits RunLimitsOf(const CheckOptions& o, double seconds) {
  return {.seconds = seconds,
          .memory_bytes = o.sample_memory_bytes < 0 ? ort::DefaultRunMemoryBytes() : o.sample_memory_bytes};
}

// r.arithmetic: TF32's own probe (check_tf32.cc, a re-run with use_tf32=0)
// outranks the rest; when it ran and found TF32 not the cause, the config's
// word for TF32 does not name it either.
void NameArithmetic(CheckReport& r, const RunConfig& target, const ReferenceModel& reference,
                    const std::string& ort) {
  if (r.arithmetic && r.arithmetic->arithmetic == "tf32") return;
  r.arithmetic = WorstArithmetic(r, target, reference, ort);
  if (!r.tf32_probe.empty() && r.arithmetic && r.arithmetic->arithmetic == "tf32") r.arithmetic.reset();
}

// The syntax stage's findings and note into the report.
void TakeSyntax(CheckReport& r, SyntaxFound found) {
  r.stages.push_back(std::move(found.stage));
  r.notes.insert(r.notes.end(), found.notes.begin(), found.notes.end());
}

// The report's stage named `name`; null before that stage ran.
StageResult* StageNamed(CheckReport& r, std::string_view name) {
  auto it = std::find_if(r.stages.begin(), r.stages.end(), [&](const StageResult& s) { return s.name == name; });
  return it != r.stages.end() ? &*it : nullptr;
}

// The numerics stage's findings, samples, tallies, alignment and notes into
// the report; its deferred half (FinishNumerics) joins the stage there.
void TakeNumerics(CheckReport& r, NumericsFound found) {
  StageResult* there = StageNamed(r, found.stage.name);
  if (there == nullptr) {
    r.stages.push_back(std::move(found.stage));
  } else {
    there->findings.insert(there->findings.end(), found.stage.findings.begin(), found.stage.findings.end());
    there->status = StatusOf(there->findings);
    there->seconds += found.stage.seconds;
  }
  std::move(found.samples.begin(), found.samples.end(), std::back_inserter(r.samples));
  std::move(found.top1.begin(), found.top1.end(), std::back_inserter(r.top1));
  std::move(found.detections.begin(), found.detections.end(), std::back_inserter(r.detections));
  if (found.alignment) r.alignment = std::move(found.alignment);
  r.notes.insert(r.notes.end(), found.notes.begin(), found.notes.end());
}

// The runtime stage's findings and measures into the report.
void TakeRuntime(CheckReport& r, RuntimeFound found) {
  std::move(found.performance.begin(), found.performance.end(), std::back_inserter(r.performance));
  r.stages.push_back(std::move(found.stage));
}

// The robustness stage's findings and anomaly samples into the report.
void TakeRobustness(CheckReport& r, RobustnessFound found) {
  std::move(found.samples.begin(), found.samples.end(), std::back_inserter(r.samples));
  r.stages.push_back(std::move(found.stage));
}

// What localizing found into the report: its findings into the numerics stage.
void TakeLocalized(CheckReport& r, Localized found) {
  if (StageResult* numerics = StageNamed(r, "numerics"))
    numerics->findings.insert(numerics->findings.end(), found.numerics.begin(), found.numerics.end());
  r.layer_curve.insert(r.layer_curve.end(), found.layer_curve.begin(), found.layer_curve.end());
  if (found.quant) r.quant = std::move(found.quant);
  r.notes.insert(r.notes.end(), found.notes.begin(), found.notes.end());
  if (found.locate) r.locate = std::move(found.locate);
}

// The generation stage's findings, loop and prompts into the report.
void TakeGeneration(CheckReport& r, GenerationFound found) {
  if (!found.stage) return;
  r.generation = std::move(found.generation);
  if (!found.prompts.empty()) r.generation_prompts = std::move(found.prompts);
  r.stages.push_back(std::move(*found.stage));
}

}  // namespace

Result<CheckReport> RunCheck(const CheckOptions& o) {
  PARITY_RETURN_IF_ERROR(CheckReferenceKinds(o));
  // A provider that cannot be loaded is a setup mistake (exit 2), found
  // before any model is read, not a failed syntax stage.
  PARITY_RETURN_IF_ERROR(ort::CheckConfig(o.target));
  PARITY_RETURN_IF_ERROR(ort::CheckConfig(o.reference.config));
  Sha256FileInBackground model_sha(o.model_path);  // while the model is parsed
  ort::WarmUpInBackground ort_ready;  // ORT and its plugins, while the model is parsed
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(o.model_path));
  Context ctx{.options = o,
              .subject = {.model = std::move(model), .label = o.model_path},
              .reference = {.results = RunResults("reference", o.reference_outputs_in_memory)}};
  ctx.subject.info = Inspect(ctx.subject.model);
  // The report, built here from what each stage returns: no stage holds it.
  CheckReport r;
  std::optional<Sha256FileInBackground> reference_sha;  // for the dumps' provenance
  PARITY_ASSIGN_OR_RETURN(r.notes, LoadReferences(ctx, reference_sha));
  PARITY_RETURN_IF_ERROR(HasTensorOutputs(ctx.subject));
  PARITY_ASSIGN_OR_RETURN(ctx.subject.samples,
                          LoadOrGenerateSamples(ctx, SampleModel(ctx.subject), r.sample_notes));
  ctx.judging = JudgingOf(ctx.subject, o.policy);
  r.tool_version = CurrentEnvironment().parity_version;
  r.env = CurrentEnvironment();
  r.config = ConfigOf(o);

  StepMeter timed(ctx, r);
  // Every ORT run of the check obeys the per-sample limits (ort/run_limits.h);
  // the default time limit is known once the reference's pass has timed it.
  ort::ScopedRunLimits limits(RunLimitsOf(o, o.sample_timeout_s < 0 ? kFirstRunTimeout : o.sample_timeout_s));
  TakeSyntax(r, timed(StageSyntax));
  limits.Set(RunLimitsOf(o, ctx.bounds.sample_timeout_s));
  r.stages.push_back(timed(StageSignature));
  TakeNumerics(r, timed(StageNumerics));
  AddDeclaredShapesFinding(ctx.target.declared, r);  // every run the numerics stage bound
  timed.MoveReferencePass();
  if (ctx.input_error) return std::unexpected(std::move(*ctx.input_error));
  if (ctx.target.session() && ort::RecordsAssignment(o.target)) r.target_assignment = ctx.target.session()->ep_assignment();
  TakeRuntime(r, timed(StageRuntime));
  TakeRobustness(r, timed(StageRobustness));
  // The target's session is released before the steps that create their
  // own: one session (one copy of the weights) alive at a time.
  ctx.flags.sessions_loaded = ctx.reference.loaded && ctx.target.session() != nullptr;
  ctx.target.Release();
  Tf32Probe tf32 = timed.Step("tf32 probe", [&r](Context& c) { return ProbeTf32(c, r.samples); });
  r.tf32_probe = std::move(tf32.note);
  r.arithmetic = std::move(tf32.tf32);
  if (auto deferred = timed.Step("numerics", FinishNumerics)) TakeNumerics(r, std::move(*deferred));
  if (ctx.input_error) return std::unexpected(std::move(*ctx.input_error));
  TakeLocalized(r, timed.Step("layer curve / locate", [&r](Context& c) { return Localize(c, r.samples); }));
  TakeGeneration(r, timed(StageGeneration));
  if (ctx.input_error) return std::unexpected(std::move(*ctx.input_error));
  r.control_flow = timed.Step("control flow", [&r](Context& c) { return ObserveControlFlow(c, r.samples); });
  AttachOutputRules(ctx.judging, r);
  NameArithmetic(r, o.target, ctx.subject.reference, OrtAgainst(o));
  ReconcileAccepts(r);
  r.reference_runtime = ctx.reference.ort;
  r.model = ModelFacts(ctx.subject, ModelSha(model_sha));  // hashed while the check ran
  ProvenanceNotes(ctx, model_sha, reference_sha, r);
  Decide(r, o.strict);
  return r;
}

}  // namespace parity
