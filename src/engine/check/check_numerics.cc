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
#include "engine/run/session_run.h"
#include "engine/run/set_outputs.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/torch_compare.h"

namespace parity::check_internal {
namespace {

// "; rule qdq_steps: 4 quantization steps of ..." for an output whose band
// was derived from the quantization parameters (output_tolerance.h).
std::string RuleOf(const Context& ctx, const std::string& output) {
  for (const auto& r : ctx.output_rules)
    if (r.output == output) return fmt::format("; rule {}: {}", r.rule, r.why);
  return "";
}

void AddOutputs(SampleResult& result, const SetComparison& cmp, const std::string& against) {
  for (const auto& t : cmp.tensors) {
    result.outputs.push_back({t.name, against, t});
    if (t.status == Verdict::kFail) result.status = Verdict::kFail;
  }
}

// " on onnxruntime VERSION" when the reference runs another release.
std::string OnReferenceRuntime(const Context& ctx) {
  return ctx.reference_ort ? fmt::format(" on onnxruntime {}", ctx.reference_ort->version) : std::string();
}

// One finding per output compared against the reference, and one per fatal
// set finding (a missing output, a shape or dtype change).
void AddReferenceFindings(const Context& ctx, const std::string& id, const SetComparison& cmp,
                          std::vector<CheckFinding>& f) {
  for (const auto& t : cmp.tensors) {
    const std::string oid = fmt::format("{}.{}", id, t.name);
    if (t.status == Verdict::kFail)
      f.push_back(Fail(oid, fmt::format("[{}] vs [{}]{}: {}{}", ctx.options.target.Label(),
                                        ctx.options.reference.config.Label(), OnReferenceRuntime(ctx), t.reason,
                                        RuleOf(ctx, t.name))));
    else
      f.push_back(Pass(oid, fmt::format("max_abs {:.3g} within atol {:.3g} rtol {:g} ({}){}{}", t.metrics.max_abs,
                                        t.tolerance.tolerance.atol, t.tolerance.tolerance.rtol,
                                        ToleranceModeName(t.tolerance.mode),
                                        t.tolerance.slices ? "; " + t.tolerance.Why() : "", RuleOf(ctx, t.name))));
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
void ReportReferenceDied(Context& ctx, SampleResult result, const std::string& id, const Error& e,
                         std::vector<CheckFinding>& f) {
  result.status = Verdict::kUnchecked;
  result.behaviour = kReferenceDied;
  result.error = e.message();
  f.push_back(Skip(id, "not judged: the reference could not run it: " + result.error));
  ctx.report.samples.push_back(std::move(result));
}

// Runs one non-anomalous sample under both configs and compares the outputs.
// A sample a run of which was stopped at a limit is reported so
// (ReportStopped) and the check goes on. `ranges`: a derived model's input ranges (null otherwise).
void CheckSample(Context& ctx, const Sample& sample, SampleKind kind, const CompareOptions& compare,
                 const std::map<std::string, InputRange>* ranges, std::vector<CheckFinding>& f) {
  SampleResult result{.name = sample.name,
                      .kind = std::string(SampleKindName(kind)),
                      .input_summary = DescribeTensors(sample.tensors)};
  auto ref = ReferenceOutputs(ctx, sample);
  auto test = ref ? RunOn(ctx, *ctx.target, sample) : ref;
  const std::string id = fmt::format("numerics.{}", sample.name);
  if (ReportStopped(ctx, result, id, ref, test, f)) return;
  if (!ref && IsRunnerDied(ref.error())) return ReportReferenceDied(ctx, std::move(result), id, ref.error(), f);
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
    ctx.report.samples.push_back(std::move(result));
    return;
  }
  if (!test) {
    result.status = Verdict::kFail;
    result.error = test.error().message();
    f.push_back(Fail(id, result.error));
    ctx.report.samples.push_back(std::move(result));
    return;
  }
  // The layer curve observes the first non-anomalous sample: the target's
  // plan keeps what the deployed session gave for it.
  if (&sample == FirstOrdinarySample(ctx)) ctx.target_first_outputs = *test;
  // A float16 model's outputs are compared in the float model's dtype.
  if (ctx.reference_model) *test = CastLike(*test, *ref);
  auto cmp = CompareSets(*ref, *test, compare);
  // Conditioning (tolerance.h ApplyConditioningFloor): a failing sample of
  // the model against itself at another config is judged again with each
  // band floored by how far float32 moves that output on this sample. A
  // derived model's bands come from its own grid (input_range.h).
  if (cmp && !cmp->passed() && !ctx.reference_model)
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
      BindDeclaredShapes(ctx, sample.name, sample.tensors, *test);
      JudgeForRobustness(ctx, result, id, why, *cmp, f);
      return;
    }
  AddTop1(*ref, *test, ctx.report.top1);
  AddDetections(*ref, *test, ctx.report.detections);
  AddOutputs(result, *cmp, "onnx:" + ctx.options.reference.config.Label());
  BindDeclaredShapes(ctx, sample.name, sample.tensors, *test);
  if (const std::string why = Undecidable(*cmp); !why.empty()) {
    // Every band as wide as its output: passing says nothing (coverage).
    result.status = Verdict::kUnchecked;
    f.push_back(Skip(id, why));
  } else {
    AddReferenceFindings(ctx, id, *cmp, f);
  }
  ctx.report.samples.push_back(std::move(result));
  return;
}

// How one sample of a dump fared against PyTorch (for numerics.torch.sizes).
struct SizeOutcome {
  std::string name;     // the sample's name in the report
  std::string inputs;   // "images float32 [1, 3, 32, 96]"
  std::string failure;  // empty when it agrees; else the worst output's reason
};

// One sample of a dump through the target config against the dump's outputs
// (result `name`, finding ids under `id`). The dump's float64 outputs
// calibrate the default band (CalibrateOnTorchFp64); a dump whose float64
// outputs cannot be read fails the comparison, as in locate. Returns false
// when the sample's inputs or outputs cannot be read. `for_curve`: the
// sample and the target's outputs are kept for the layer curve.
bool CheckTorchSample(Context& ctx, const TorchDump& dump, const TorchDumpSample& s, const std::string& name,
                      const std::string& id, const CompareOptions& compare, std::vector<CheckFinding>& f,
                      std::vector<SizeOutcome>& outcomes, bool for_curve) {
  auto inputs = LoadTorchFiles(dump, s.inputs);
  auto expected = LoadTorchFiles(dump, s.outputs);
  if (!inputs || !expected) {
    f.push_back(Fail(id, (!inputs ? inputs.error() : expected.error()).message()));
    return false;
  }
  Sample sample{name, std::move(*inputs)};
  SampleResult result{.name = name,
                      .kind = std::string(SampleKindName(SampleKind::kUser)),
                      .input_summary = DescribeTensors(sample.tensors)};
  SizeOutcome outcome{.name = name, .inputs = result.input_summary};
  auto fail = [&](const std::string& fid, std::string why) {
    result.status = Verdict::kFail;
    result.error = why;
    outcome.failure = why;
    f.push_back(Fail(fid, std::move(why)));
  };
  CompareOptions against_torch = compare;
  TensorSet fp64;
  auto test = RunOn(ctx, *ctx.target, sample);
  if (test) BindDeclaredShapes(ctx, name, sample.tensors, *test);
  if (test && for_curve) {
    ctx.torch_curve_sample = sample;
    ctx.torch_target_outputs = *test;
  }
  if (!test && IsStopped(test.error())) {
    // Stopped at a limit: reported once, never judged, never run again.
    result.timed_out = true;
    result.over_memory = !IsTimeout(test.error());
    ctx.stopped.insert(name);
    fail(id, fmt::format("{}: the target run of PyTorch's sample was stopped at its limit: {}", result.StatusWord(),
                         test.error().message()));
  } else if (!test) {
    fail(id, fmt::format("PyTorch takes this sample, the export does not: {}", test.error().message()));
  } else if (Status calibrated = CalibrateOnTorchFp64(dump, s, against_torch, &fp64); !calibrated) {
    fail(id + ".fp64", calibrated.error().message());
  } else if (auto cmp = CompareSets(*expected, *test, against_torch); cmp) {
    AddOutputs(result, *cmp, "torch");
    for (const auto& t : cmp->tensors) {
      if (t.status == Verdict::kFail && outcome.failure.empty()) outcome.failure = t.name + ": " + t.reason;
      f.push_back(t.status == Verdict::kFail
                      ? Fail(id + "." + t.name, "against PyTorch: " + t.reason)
                      : Pass(id + "." + t.name, fmt::format("against PyTorch: max_abs {:.3g}; tolerance {}",
                                                            t.metrics.max_abs, t.tolerance.Why())));
    }
    for (const auto& finding : cmp->findings)
      if (finding.fatal) {
        outcome.failure = fmt::format("{}: {}", finding.name, FindingKindName(finding.kind));
        result.status = Verdict::kFail;
        f.push_back(Fail(id + "." + finding.name,
                         fmt::format("against PyTorch: {}: PyTorch {}, ONNX {}", FindingKindName(finding.kind),
                                     finding.reference, finding.test)));
      }
  } else {
    fail(id, cmp.error().message());
  }
  ctx.report.samples.push_back(std::move(result));
  outcomes.push_back(std::move(outcome));
  return true;
}

// Every sample of every dump against PyTorch; then, when there is more than
// one, numerics.torch.sizes names the sizes where the export departs.
// Returns false when the first dump's traced sample cannot be read.
bool CheckTorchOutputs(Context& ctx, const CompareOptions& compare, std::vector<CheckFinding>& f) {
  std::vector<SizeOutcome> outcomes;
  for (size_t k = 0; k <= ctx.more_dumps.size(); ++k) {
    const TorchDump& dump = k == 0 ? *ctx.dump : ctx.more_dumps[k - 1];
    const std::string prefix = k == 0 ? "torch" : fmt::format("torch{}", k + 1);
    for (const TorchDumpSample& s : dump.Samples()) {
      const bool traced = s.name == "traced";
      const std::string name = traced ? prefix : prefix + ":" + s.name;
      const std::string id = "numerics." + prefix + (traced ? "" : "." + s.name);
      const bool first_traced = k == 0 && traced;  // the curve's sample; unreadable, it ends the stage
      if (!CheckTorchSample(ctx, dump, s, name, id, compare, f, outcomes, first_traced) && first_traced) return false;
    }
  }
  if (outcomes.size() < 2) return true;
  std::vector<std::string> departs, agrees;
  for (const auto& o : outcomes)
    (o.failure.empty() ? agrees : departs).push_back(fmt::format("{} ({})", o.name, o.inputs));
  if (departs.empty()) {
    f.push_back(Pass("numerics.torch.sizes", fmt::format("the export agrees with PyTorch at every dumped size ({}): {}",
                                                         outcomes.size(), fmt::join(agrees, ", "))));
    return true;
  }
  std::string worst;
  for (const auto& o : outcomes)
    if (!o.failure.empty()) {
      worst = fmt::format("; at {}: {}", o.name, o.failure);
      break;
    }
  f.push_back(Fail("numerics.torch.sizes",
                   fmt::format("the export departs from PyTorch at {} of {} sizes: {}{}{}", departs.size(),
                               outcomes.size(), fmt::join(departs, ", "),
                               agrees.empty() ? "" : fmt::format("; it agrees at {}", fmt::join(agrees, ", ")),
                               worst, SizeOneHint(*ctx.dump))));
  return true;
}

// Layer by layer against the dump through the unfused reference (an
// exporter problem shows there, apart from any fusion).
// The run also keeps, for the layer curve (check_locate.cc), the tensors the
// deployed plan leaves and the outputs, when it runs the reference's own
// unoptimized config: the curve then reads the reference from them.
void CheckTorchLayers(Context& ctx, std::vector<CheckFinding>& f) {
  TorchCompareOptions torch_options{.policy = ctx.options.policy, .label = ctx.label};
  const RunConfig& config = ctx.options.torch->config;
  KeptValues kept;
  if (ctx.target_plan && config == ctx.options.reference.config && config.opt_level == OptLevel::kDisable) {
    kept.names = ctx.target_plan->map.surviving;
    for (const auto& out : ctx.info.outputs) kept.names.push_back(out.name);
    torch_options.keep = &kept;
  }
  auto layers = CompareWithTorch(ctx.model, *ctx.dump, config, torch_options);
  if (layers && torch_options.keep) ctx.kept_reference.emplace(std::move(kept));
  if (!layers) {
    // A dump file that cannot be read (a FIFO, a folder, a malformed .npy) is
    // bad input, not a divergence: exit 2, never a FAIL CI reads as one.
    const ErrorCode code = layers.error().code();
    if (code == ErrorCode::kInvalidArgument || code == ErrorCode::kNotFound || code == ErrorCode::kCorrupt)
      ctx.input_error = layers.error();
    f.push_back(Fail("numerics.torch.layers", layers.error().message()));
    return;
  }
  ctx.report.alignment = *layers;
  ExcursionNotes(*layers, ctx.report.notes);
  const size_t aligned = layers->layers.size() - layers->Count(AlignHow::kNone);
  if (auto s = CheckSomeLayerAligned(*ctx.dump, aligned, ctx.label); !s) ctx.input_error = s.error();
  if (layers->first_divergence) {
    f.push_back(Fail("numerics.torch.first_divergent_layer", layers->VerdictLine()));
  } else if (layers->unexplained) {
    f.push_back(Fail("numerics.torch.unexplained_divergence", layers->unexplained->Describe()));
  } else if (!layers->Uncovered().empty()) {
    // Tensors of their shape disagree with them: without structure that is
    // the divergence (FAIL); with it, refused layers nothing agreeing follows
    // could hide one (not judged, coverage).
    const bool structure = layers->Count(AlignHow::kScope) + layers->Count(AlignHow::kName) > 0;
    f.push_back(CheckFinding{"numerics.torch.unchecked_layers", structure ? Verdict::kUnchecked : Verdict::kFail,
                             fmt::format("{}; {}", layers->AlignmentLine(), layers->VerdictLine())});
  } else {
    f.push_back(Pass("numerics.torch.layers", fmt::format("{}; none diverges{}", layers->AlignmentLine(),
                                                          layers->Refused().empty() ? "" : "; " + layers->VerdictLine())));
  }
}

// With --reference-model: every tensor the two models share, both unfused
// (as locate --target-model compares them), on the first non-anomalous
// sample. A fault inside the model that leaves the outputs within tolerance
// (a weight scaled in a network whose outputs are small) fails here, at the
// first tensor that departs.
void CheckSharedTensors(Context& ctx, std::vector<CheckFinding>& f) {
  const std::string id = "numerics.reference_model.tensors";
  const Sample* sample = FirstOrdinarySample(ctx);
  if (sample == nullptr) return;
  if (!ctx.output_rules.empty()) {
    // Every tensor of a quantized or float16 model departs from float32's
    // tolerance by design: its layers are judged in steps of their grid in
    // the per-layer report (`quant`: SQNR, steps, worst local loss).
    f.push_back(Skip(id, "a derived (quantized / float16) model: its shared tensors are measured in quantization "
                         "steps in the per-layer precision report, not judged with float tolerances"));
    return;
  }
  LocateOptions options{.reference = ctx.options.reference.config,
                        .target = ctx.options.reference.config,
                        .policy = ctx.policy,
                        .model_label = ctx.options.reference.path.string(),
                        .target_label = ctx.label,
                        .ablation = false,
                        .drilldown = false};
  auto report = Locate(*ctx.reference_model, &ctx.model, *sample, options);
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

}  // namespace

const Sample* FirstOrdinarySample(const Context& ctx) {
  for (const auto& s : ctx.samples) {
    if (SampleKindOf(s.name) == SampleKind::kAnomaly || ctx.stopped.contains(s.name)) continue;
    const auto it = ctx.reference_outputs.find(s.name);
    if (it == ctx.reference_outputs.end() || it->second) return &s;  // not run yet, spilled, or run
  }
  return nullptr;
}

Result<TensorSet> RunOn(const Context& ctx, const ort::Session& session, const Sample& sample) {
  const ort::OutputBuffers copied = ort::OutputBuffers::kCopied;
  if (!ctx.reference_model) return RunSample(session, sample, ctx.label, {}, copied, ctx.sample_timeout_s);
  return RunSample(session, FitToSession(session, sample), ctx.label, {}, copied, ctx.sample_timeout_s);
}

void StageNumerics(Context& ctx) {
  StageResult stage{.name = "numerics"};
  std::vector<CheckFinding>& f = stage.findings;
  if (!ctx.reference_loaded || !ctx.target) {
    f.push_back(Skip("numerics", "skipped: ORT could not load the model (see syntax)"));
    ctx.report.stages.push_back(std::move(stage));
    return;
  }
  CompareOptions compare;
  compare.policy = ctx.policy;
  compare.set_groups = SetValuedOutputs(ctx.model);  // NMS detections, TopK indices: judged as sets
  // Slice bands need a scale of each part's own (compare/slice_bands.h): a
  // float reference model, or PyTorch's fp64 run. Between two configs of one
  // model every part's error follows the scale of the computation that made
  // it: a near-dead channel of a raw YOLOv8n map failed its own band on 1e-6.
  compare.slice_bands = ctx.reference_model.has_value();
  CompareOptions against_torch = compare;
  against_torch.slice_bands = true;
  // A derived (int8, fp16) model's numbers are judged inside its inputs'
  // range; boundary samples beyond it, for robustness (input_range.h).
  std::optional<std::map<std::string, InputRange>> ranges;
  if (ctx.reference_model && !ctx.output_rules.empty()) ranges = DerivedInputRanges(ctx.model, ctx.samples);
  int done = 0;
  for (const auto& sample : ctx.samples) {
    if (ctx.options.progress) ctx.options.progress("numerics", done++, static_cast<int>(ctx.samples.size()));
    const SampleKind kind = SampleKindOf(sample.name);
    if (kind == SampleKind::kAnomaly) continue;
    CheckSample(ctx, sample, kind, compare, ranges ? &*ranges : nullptr, f);
  }
  // Against PyTorch: the dump's own inputs through the target config here;
  // layer by layer through the unfused reference in FinishNumerics.
  if (ctx.dump) ctx.torch_outputs_read = CheckTorchOutputs(ctx, against_torch, f);
  AddDeclaredShapesFinding(ctx);
  ctx.numerics_deferred = true;
  stage.status = StatusOf(f);
  ctx.report.stages.push_back(std::move(stage));
}

void FinishNumerics(Context& ctx) {
  if (!ctx.numerics_deferred) return;
  StageResult* stage = nullptr;
  for (auto& s : ctx.report.stages)
    if (s.name == "numerics") stage = &s;
  if (stage == nullptr) return;
  const auto start = std::chrono::steady_clock::now();
  std::vector<CheckFinding>& f = stage->findings;
  if (ctx.reference_model) CheckSharedTensors(ctx, f);
  if (ctx.dump && ctx.torch_outputs_read) CheckTorchLayers(ctx, f);
  stage->status = StatusOf(f);
  stage->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace parity::check_internal
