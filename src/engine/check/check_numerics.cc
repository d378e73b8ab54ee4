// The numerics stage: every non-anomalous sample under the target config
// against the unfused reference, and, with a PyTorch dump, against PyTorch
// (outputs and layer by layer). On a failure, locate names the node.
#include <fmt/format.h>

#include "compare/compare_sets.h"
#include "engine/check/check_internal.h"
#include "engine/inputs/input_check.h"
#include "engine/run/runner.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/torch_compare.h"

namespace parity::check_internal {
namespace {

void AddOutputs(SampleResult& result, const SetComparison& cmp, const std::string& against) {
  for (const auto& t : cmp.tensors) {
    result.outputs.push_back({t.name, against, t});
    if (t.status == Verdict::kFail) result.status = Verdict::kFail;
  }
}

// One finding per output compared against the reference, and one per fatal
// set finding (a missing output, a shape or dtype change).
void AddReferenceFindings(const Context& ctx, const std::string& id, const SetComparison& cmp,
                          std::vector<CheckFinding>& f) {
  for (const auto& t : cmp.tensors) {
    const std::string oid = fmt::format("{}.{}", id, t.name);
    if (t.status == Verdict::kFail)
      f.push_back(Fail(oid, fmt::format("[{}] vs [{}]: {}", ctx.options.target.Label(), ctx.options.reference.config.Label(),
                                        t.reason)));
    else
      f.push_back(Pass(oid, fmt::format("max_abs {:.3g} within atol {:.3g} rtol {:g} ({})", t.metrics.max_abs,
                                        t.tolerance.tolerance.atol, t.tolerance.tolerance.rtol,
                                        ToleranceModeName(t.tolerance.mode))));
  }
  for (const auto& finding : cmp.findings)
    if (finding.fatal)
      f.push_back(Fail(fmt::format("{}.{}", id, finding.name),
                       fmt::format("{}: reference {}, target {}", FindingKindName(finding.kind), finding.reference,
                                   finding.test)));
}

// Runs one non-anomalous sample under both configs and compares the outputs.
// Returns false when the runtime ran out of memory (ctx.fatal is then set and
// the stage ends).
bool CheckSample(Context& ctx, const Sample& sample, SampleKind kind, const CompareOptions& compare,
                 std::vector<CheckFinding>& f) {
  SampleResult result{.name = sample.name,
                      .kind = std::string(SampleKindName(kind)),
                      .input_summary = DescribeTensors(sample.tensors)};
  auto ref = RunSample(*ctx.reference, sample, ctx.label);
  auto test = ref ? RunSample(*ctx.target, sample, ctx.label) : ref;
  const std::string id = fmt::format("numerics.{}", sample.name);
  if (!ref && kind == SampleKind::kBoundary && ctx.options.inputs_path.empty()) {
    // A size parity made up that the model refuses even unfused (a
    // detector needing multiples of its stride, say) is outside the model's
    // domain, not a defect of the export: said, not failed.
    result.status = Verdict::kUnchecked;
    result.error = ref.error().message();
    f.push_back(Skip(id, fmt::format("the model refuses this generated sample even unfused (give --inputs or "
                                     "--shape for legal sizes): {}",
                                     result.error)));
    ctx.report.samples.push_back(std::move(result));
    return true;
  }
  if (!ref || !test) {
    if (const Error& e = (!ref ? ref : test).error(); IsOutOfMemory(e)) {
      ctx.fatal = Error(ErrorCode::kRuntime, fmt::format("sample '{}': {}", sample.name, e.message()));
      return false;
    }
    result.status = Verdict::kFail;
    result.error = (!ref ? ref : test).error().message();
    f.push_back(Fail(id, result.error));
    ctx.report.samples.push_back(std::move(result));
    return true;
  }
  auto cmp = CompareSets(*ref, *test, compare);
  if (!cmp) {
    f.push_back(Fail(id, cmp.error().message()));
    return true;
  }
  AddOutputs(result, *cmp, "onnx:" + ctx.options.reference.config.Label());
  AddReferenceFindings(ctx, id, *cmp, f);
  ctx.report.samples.push_back(std::move(result));
  return true;
}

// The dump's own inputs through the target config, against the dump's
// outputs. Returns false when the dump's inputs or outputs cannot be read.
bool CheckTorchOutputs(Context& ctx, const CompareOptions& compare, std::vector<CheckFinding>& f) {
  auto inputs = LoadTorchInputs(*ctx.dump);
  auto expected = LoadTorchOutputs(*ctx.dump);
  if (!inputs || !expected) {
    f.push_back(Fail("numerics.torch", (!inputs ? inputs.error() : expected.error()).message()));
    return false;
  }
  Sample sample{"torch", std::move(*inputs)};
  SampleResult result{.name = "torch",
                      .kind = std::string(SampleKindName(SampleKind::kUser)),
                      .input_summary = DescribeTensors(sample.tensors)};
  auto test = RunSample(*ctx.target, sample, ctx.label);
  if (!test) {
    result.status = Verdict::kFail;
    result.error = test.error().message();
    f.push_back(Fail("numerics.torch", result.error));
    ctx.report.samples.push_back(std::move(result));
    return true;
  }
  // The dump's float64 outputs calibrate the default band
  // (CalibrateOnTorchFp64); a dump whose float64 outputs cannot be read fails
  // the comparison with PyTorch, as in locate.
  CompareOptions against_torch = compare;
  TensorSet fp64;
  if (Status calibrated = CalibrateOnTorchFp64(*ctx.dump, against_torch, &fp64); !calibrated) {
    result.status = Verdict::kFail;
    result.error = calibrated.error().message();
    f.push_back(Fail("numerics.torch.fp64", result.error));
    ctx.report.samples.push_back(std::move(result));
    return true;
  }
  if (auto cmp = CompareSets(*expected, *test, against_torch); cmp) {
    AddOutputs(result, *cmp, "torch");
    for (const auto& t : cmp->tensors)
      f.push_back(t.status == Verdict::kFail
                      ? Fail("numerics.torch." + t.name, "against PyTorch: " + t.reason)
                      : Pass("numerics.torch." + t.name, fmt::format("against PyTorch: max_abs {:.3g}; tolerance {}",
                                                                     t.metrics.max_abs, t.tolerance.Why())));
  }
  ctx.report.samples.push_back(std::move(result));
  return true;
}

// Layer by layer against the dump through the unfused reference (an
// exporter problem shows there, apart from any fusion).
void CheckTorchLayers(Context& ctx, std::vector<CheckFinding>& f) {
  TorchCompareOptions torch_options{.policy = ctx.options.policy, .label = ctx.label};
  auto layers = CompareWithTorch(ctx.model, *ctx.dump, ctx.options.torch->config, torch_options);
  if (!layers) {
    f.push_back(Fail("numerics.torch.layers", layers.error().message()));
    return;
  }
  ctx.report.alignment = *layers;
  const size_t aligned = layers->layers.size() - layers->Count(AlignHow::kNone);
  if (auto s = CheckSomeLayerAligned(*ctx.dump, aligned, ctx.label); !s) ctx.input_error = s.error();
  if (layers->first_divergence) {
    f.push_back(Fail("numerics.torch.first_divergent_layer", layers->VerdictLine()));
  } else if (layers->unexplained) {
    f.push_back(Fail("numerics.torch.unexplained_divergence", layers->unexplained->Describe()));
  } else {
    f.push_back(Pass("numerics.torch.layers", fmt::format("{}; none diverges", layers->AlignmentLine())));
  }
}

}  // namespace

void StageNumerics(Context& ctx) {
  StageResult stage{.name = "numerics"};
  std::vector<CheckFinding>& f = stage.findings;
  if (!ctx.reference || !ctx.target) {
    f.push_back(Skip("numerics", "skipped: ORT could not load the model (see syntax)"));
    ctx.report.stages.push_back(std::move(stage));
    return;
  }
  CompareOptions compare;
  compare.policy = ctx.options.policy;
  int done = 0;
  for (const auto& sample : ctx.samples) {
    if (ctx.options.progress) ctx.options.progress("numerics", done++, static_cast<int>(ctx.samples.size()));
    const SampleKind kind = SampleKindOf(sample.name);
    if (kind == SampleKind::kAnomaly) continue;
    if (!CheckSample(ctx, sample, kind, compare, f)) {
      ctx.report.stages.push_back(std::move(stage));
      return;
    }
  }
  if (ctx.dump) {
    // Against PyTorch: the dump's own inputs through the target config, and
    // layer by layer through the unfused reference.
    if (CheckTorchOutputs(ctx, compare, f)) CheckTorchLayers(ctx, f);
  }
  stage.status = StatusOf(f);
  ctx.report.stages.push_back(std::move(stage));
}

}  // namespace parity::check_internal
