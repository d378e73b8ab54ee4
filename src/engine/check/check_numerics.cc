// The numerics stage: every non-anomalous sample under the target config
// against the unfused reference, and, with a PyTorch dump, against PyTorch
// (outputs and layer by layer). On a failure, locate names the node.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include "compare/compare_sets.h"
#include "engine/check/check_internal.h"
#include "engine/inputs/input_check.h"
#include "engine/locate/locate.h"
#include "engine/quant/cast.h"
#include "engine/quant/input_range.h"
#include "engine/runner/session_run.h"
#include "engine/run/set_outputs.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/torch_compare.h"

namespace parity::check_internal {
namespace {

// "; rule qdq_steps: 4 quantization steps of ..." for an output whose band
// was derived from the quantization parameters (output_tolerance.h).
std::string RuleOf(const Judging& judging, const std::string& output) {
  for (const auto& r : judging.output_rules)
    if (r.output == output) return fmt::format("; rule {}: {}", r.rule, r.why);
  return "";
}

// One finding per output compared against the reference, and one per fatal
// set finding (a missing output, a shape or dtype change).
void AddReferenceFindings(const std::string& versus, const Judging& judging, const std::string& id,
                          const SetComparison& cmp, std::vector<CheckFinding>& f) {
  for (const auto& t : cmp.tensors) {
    const std::string oid = fmt::format("{}.{}", id, t.name);
    if (t.status == Verdict::kFail)
      f.push_back(Fail(oid, fmt::format("{}: {}{}", versus, t.reason, RuleOf(judging, t.name))));
    else
      f.push_back(Pass(oid, fmt::format("max_abs {:.3g} within atol {:.3g} rtol {:g} ({}){}{}", t.metrics.max_abs,
                                        t.tolerance.tolerance.atol, t.tolerance.tolerance.rtol,
                                        ToleranceModeName(t.tolerance.mode),
                                        t.tolerance.slices ? "; " + t.tolerance.Why() : "", RuleOf(judging, t.name))));
  }
  for (const auto& finding : cmp.findings)
    if (finding.fatal)
      f.push_back(Fail(fmt::format("{}.{}", id, finding.name),
                       fmt::format("{}: reference {}, target {}", FindingKindName(finding.kind), finding.reference,
                                   finding.test)));
}

// Why float32 cannot decide this sample (tolerance.h
// ApplyConditioningFloor): every floating output's band, floored by its
// conditioning, reaches its own rms; "" when some output was judged.
std::string Undecidable(const SetComparison& cmp) {
  int floated = 0;
  for (const auto& t : cmp.tensors) {
    const ResolvedTolerance& tol = t.tolerance;
    const bool conditioned = std::any_of(tol.rules_fired.begin(), tol.rules_fired.end(),
                                         [](const std::string& r) { return r.starts_with("conditioning:"); });
    if (!conditioned || t.status != Verdict::kPass || !(tol.tolerance.atol >= tol.ref_rms)) return "";
    ++floated;
  }
  if (floated == 0) return "";
  return "not judged: float32 itself moves every output of this sample by as much as the output (an "
         "ill-conditioned sample: its inputs moved by one ulp move the outputs that far); no band can decide it "
         "(docs/compare.md, \"Conditioning\")";
}

// A sample the reference's runtime (a child process) died before running:
// not judged, and the coverage says why (CoverageOf: never a PASS).
void ReportReferenceDied(SampleResult result, const std::string& id, const Error& e, NumericsFound& found) {
  result.status = Verdict::kUnchecked;
  result.behaviour = kReferenceDied;
  result.error = e.message();
  found.stage.findings.push_back(Skip(id, "not judged: the reference could not run it: " + result.error));
  found.samples.push_back(std::move(result));
}

// Runs one non-anomalous sample under both configs and compares the outputs,
// its result and findings into `found`. A sample a run of which was stopped
// at a limit is reported so (ReportStopped) and the check goes on.
// `ranges`: a derived model's input ranges (null otherwise).
void CheckSample(Context& ctx, const Sample& sample, SampleKind kind, const CompareOptions& compare,
                 const std::map<std::string, InputRange>* ranges, NumericsFound& found) {
  std::vector<CheckFinding>& f = found.stage.findings;
  SampleResult result{.name = sample.name,
                      .kind = std::string(SampleKindName(kind)),
                      .input_summary = DescribeTensors(sample.tensors)};
  auto ref = ctx.reference.results.Get(sample.name);
  double test_ms = 0;
  auto test = ref ? TargetRun(ctx, sample, ref, &test_ms) : ref;
  const std::string id = fmt::format("numerics.{}", sample.name);
  if (ReportStopped(ctx, result, id, ref, test, f)) {
    found.samples.push_back(std::move(result));
    return;
  }
  if (!ref && IsRunnerDied(ref.error())) return ReportReferenceDied(std::move(result), id, ref.error(), found);
  if (!ref) {
    // A sample the model refuses even unfused (a size a detector cannot
    // take, a 1x1 image under a 3x3 kernel) is outside the model's domain,
    // not a defect of the config judged: the same expected refusal whether
    // parity generated it or the user gave it (PyTorch refuses such sizes
    // too; whether it does is judged on a dump's samples, against PyTorch).
    result.status = Verdict::kUnchecked;
    result.error = ref.error().message();
    f.push_back(Skip(id, fmt::format("the model refuses this {} sample even unfused, outside its domain: nothing "
                                     "to compare ({}): {}",
                                     ctx.options.inputs_path.empty() ? "generated" : "given",
                                     ctx.options.inputs_path.empty() ? "give --inputs or --shape for legal sizes"
                                                                     : "give --torch to judge it against PyTorch",
                                     result.error)));
    found.samples.push_back(std::move(result));
    return;
  }
  if (!test) {
    result.status = Verdict::kFail;
    result.error = test.error().message();
    f.push_back(Fail(id, result.error));
    found.samples.push_back(std::move(result));
    return;
  }
  // The layer curve observes the first non-anomalous sample: the target's
  // plan keeps what the deployed session gave for it.
  if (&sample == FirstOrdinarySample(ctx)) ctx.target.KeepFirstRun(*test, test_ms);
  // A float16 model's outputs are compared in the float model's dtype.
  *test = AsReference(ctx.subject, *test, *ref);
  auto cmp = CompareSets(*ref, *test, compare);
  // Conditioning (tolerance.h ApplyConditioningFloor): a failing sample of
  // the model against itself at another config is judged again with each
  // band floored by how far float32 moves that output on this sample. A
  // derived model's bands come from its own grid (input_range.h).
  if (cmp && !cmp->passed() && ctx.judging.conditioning)
    if (auto spread = ConditioningSpread(ctx, sample, *test)) {
      CompareOptions conditioned = compare;
      conditioned.conditioning = &*spread;
      cmp = CompareSets(*ref, *test, conditioned);
    }
  if (!cmp) {
    f.push_back(Fail(id, cmp.error().message()));
    return;
  }
  if (ranges != nullptr && kind == SampleKind::kBoundary)
    if (const std::string why = OutOfRange(sample, *ranges); !why.empty()) {
      BindDeclaredShapes(ctx.target.declared, ctx.subject.info, sample.name, sample.tensors, *test);
      JudgeForRobustness(ctx, result, id, why, *cmp, f);
      found.samples.push_back(std::move(result));
      return;
    }
  AddTop1(*ref, *test, found.top1);
  AddDetections(*ref, *test, found.detections);
  AddOutputs(result, *cmp, OrtAgainst(ctx.options));
  BindDeclaredShapes(ctx.target.declared, ctx.subject.info, sample.name, sample.tensors, *test);
  if (const std::string why = Undecidable(*cmp); !why.empty()) {
    // Every band as wide as its output: passing says nothing (coverage).
    result.status = Verdict::kUnchecked;
    f.push_back(Skip(id, why));
  } else {
    AddReferenceFindings(ctx.reference.Versus(ctx.options), ctx.judging, id, *cmp, f);
  }
  found.samples.push_back(std::move(result));
}

}  // namespace

// With --reference-model: every tensor the two models share, both unfused
// (as locate --target-model compares them), on the first non-anomalous
// sample. A fault inside the model that leaves the outputs within tolerance
// (a weight scaled in a network whose outputs are small) fails here, at the
// first tensor that departs.
void CheckSharedTensors(Context& ctx, NumericsFound& found) {
  std::vector<CheckFinding>& f = found.stage.findings;
  const std::string id = "numerics.reference_model.tensors";
  const Sample* sample = FirstOrdinarySample(ctx);
  if (sample == nullptr) return;
  if (!ctx.judging.output_rules.empty()) {
    // Every tensor of a quantized or float16 model departs from float32's
    // tolerance by design: its layers are judged in steps of their grid in
    // the per-layer report (`quant`: SQNR, steps, worst local loss).
    f.push_back(Skip(id, "a derived (quantized / float16) model: its shared tensors are measured in quantization "
                         "steps in the per-layer precision report, not judged with float tolerances"));
    return;
  }
  LocateOptions options{.reference = ctx.options.reference.config,
                        .target = ctx.options.reference.config,
                        .policy = ctx.judging.policy,
                        .model_label = ctx.subject.ReferenceLabel(),
                        .target_label = ctx.subject.label,
                        .ablation = false,
                        .drilldown = false};
  auto report = Locate(ctx.subject.ReferenceModel(), ctx.subject.Derived(), *sample, options);
  if (!report) {
    f.push_back(Skip(id, "the shared tensors could not be compared: " + report.error().message()));
    return;
  }
  size_t shared = 0, departing = 0;
  for (const auto& t : report->tensors) {
    shared += t.status != Verdict::kUnchecked;
    departing += t.status == Verdict::kFail;
  }
  if (!report->first_divergence) {
    f.push_back(Pass(id, fmt::format("sample '{}': the {} tensors the two models share agree (both unfused)",
                                     sample->name, shared)));
    return;
  }
  const FirstDivergence& d = *report->first_divergence;
  std::string error;
  for (const auto& t : report->tensors)
    if (t.name == d.tensor && t.metrics)
      error = fmt::format(": max_abs {:.3g}, {:.3g} x tolerance", t.metrics->max_abs, t.score);
  f.push_back(Fail(id, fmt::format("sample '{}': {} of the {} tensors the two models share depart (both unfused); "
                                   "the first is '{}', produced by node '{}' ({}){}",
                                   sample->name, departing, shared, d.tensor, d.producer, d.op_type, error)));
}

void AddOutputs(SampleResult& result, const SetComparison& cmp, const std::string& against) {
  for (const auto& t : cmp.tensors) {
    result.outputs.push_back({t.name, against, t});
    if (t.status == Verdict::kFail) result.status = Verdict::kFail;
  }
}

const Sample* FirstOrdinarySample(const Context& ctx) {
  for (const auto& s : ctx.subject.samples) {
    if (SampleKindOf(s.name) == SampleKind::kAnomaly || ctx.bounds.stopped.contains(s.name)) continue;
    if (!ctx.reference.results.Failed(s.name)) return &s;  // not run yet, spilled, or run
  }
  return nullptr;
}

Result<TensorSet> RunOn(const Context& ctx, const ort::Session& session, const Sample& sample) {
  return RunSample(session, FedTo(ctx.subject, session, sample), ctx.subject.label, {}, ort::OutputBuffers::kCopied,
                   ctx.bounds.sample_timeout_s);
}

NumericsFound StageNumerics(Context& ctx) {
  NumericsFound found{.stage = {.name = "numerics"}};
  std::vector<CheckFinding>& f = found.stage.findings;
  if (!ctx.reference.loaded || !ctx.target.session()) {
    f.push_back(Skip("numerics", "skipped: ORT could not load the model (see syntax)"));
    return found;
  }
  CompareOptions compare;
  compare.policy = ctx.judging.policy;
  compare.set_groups = SetValuedOutputs(ctx.subject.model);  // NMS detections, TopK indices: judged as sets
  // Slice bands need a scale of each part's own (compare/slice_bands.h): a
  // float reference model (Judging::slice_bands), or PyTorch's fp64 run.
  // Between two configs of one model a near-dead channel of a raw YOLOv8n
  // map failed its own band on 1e-6.
  compare.slice_bands = ctx.judging.slice_bands;
  CompareOptions against_torch = compare;
  against_torch.slice_bands = true;
  // A derived (int8, fp16) model's numbers are judged inside its inputs'
  // range; boundary samples beyond it, for robustness (input_range.h).
  std::optional<std::map<std::string, InputRange>> ranges;
  if (!ctx.judging.output_rules.empty()) ranges = DerivedInputRanges(ctx.subject.model, ctx.subject.samples);
  int done = 0;
  for (const auto& sample : ctx.subject.samples) {
    if (ctx.options.progress) ctx.options.progress("numerics", done++, static_cast<int>(ctx.subject.samples.size()));
    const SampleKind kind = SampleKindOf(sample.name);
    if (kind == SampleKind::kAnomaly) continue;
    CheckSample(ctx, sample, kind, compare, ranges ? &*ranges : nullptr, found);
  }
  // Against PyTorch: the dump's own inputs through the target config here;
  // layer by layer through the unfused reference in FinishNumerics.
  ctx.flags.torch_outputs_read = CheckTorchOutputs(ctx, against_torch, found);
  ctx.flags.numerics_deferred = true;
  found.stage.status = StatusOf(f);
  return found;
}

std::optional<NumericsFound> FinishNumerics(Context& ctx) {
  if (!ctx.flags.numerics_deferred) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  NumericsFound found{.stage = {.name = "numerics"}};
  for (DeferredStep step : DeferredNumerics(ctx)) step(ctx, found);
  found.stage.status = StatusOf(found.stage.findings);
  found.stage.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return found;
}

}  // namespace parity::check_internal
