// The numerics stage against PyTorch (check_numerics.cc runs it): every
// sample of every dump through the target config against the dump's outputs,
// and the model layer by layer against the first dump through the unfused
// reference.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/compare_sets.h"
#include "engine/check/check_internal.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/torch_compare.h"

namespace parity::check_internal {
namespace {

// How one sample of a dump fared against PyTorch (for numerics.torch.sizes).
struct SizeOutcome {
  std::string name;     // the sample's name in the report
  std::string inputs;   // "images float32 [1, 3, 32, 96]"
  std::string failure;  // empty when it agrees; else the worst output's reason
};

// One sample of a dump through the target config against the dump's outputs
// (result `name` and findings, ids under `id`, into `found`). The dump's float64 outputs
// calibrate the default band (CalibrateOnTorchFp64); a dump whose float64
// outputs cannot be read fails the comparison, as in locate. Returns false
// when the sample's inputs or outputs cannot be read. `for_curve`: the
// sample and the target's outputs are kept for the layer curve.
bool CheckTorchSample(Context& ctx, const TorchDump& dump, const TorchDumpSample& s, const std::string& name,
                      const std::string& id, const CompareOptions& compare, NumericsFound& found,
                      std::vector<SizeOutcome>& outcomes, bool for_curve) {
  std::vector<CheckFinding>& f = found.stage.findings;
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
  auto test = RunOn(ctx, *ctx.target.session(), sample);
  if (test) BindDeclaredShapes(ctx.target.declared, ctx.subject.info, name, sample.tensors, *test);
  if (test && for_curve) {
    ctx.torch.curve_sample = sample;
    ctx.torch.target_outputs = *test;
  }
  if (!test && IsStopped(test.error())) {
    // Stopped at a limit: reported once, never judged, never run again.
    result.timed_out = true;
    result.over_memory = !IsTimeout(test.error());
    ctx.bounds.stopped.insert(name);
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
  found.samples.push_back(std::move(result));
  outcomes.push_back(std::move(outcome));
  return true;
}

}  // namespace

// Every sample of every dump against PyTorch; then, when there is more than
// one, numerics.torch.sizes names the sizes where the export departs.
// Returns false when the first dump's traced sample cannot be read.
bool CheckTorchOutputs(Context& ctx, const CompareOptions& compare, NumericsFound& found) {
  std::vector<CheckFinding>& f = found.stage.findings;
  std::vector<SizeOutcome> outcomes;
  bool traced_read = false;
  for (size_t k = 0; k < ctx.torch.dumps.size(); ++k) {
    const TorchDump& dump = ctx.torch.dumps[k];
    const std::string prefix = k == 0 ? "torch" : fmt::format("torch{}", k + 1);
    for (const TorchDumpSample& s : dump.Samples()) {
      const bool traced = s.name == "traced";
      const std::string name = traced ? prefix : prefix + ":" + s.name;
      const std::string id = "numerics." + prefix + (traced ? "" : "." + s.name);
      const bool first_traced = k == 0 && traced;  // the curve's sample; unreadable, it ends the stage
      const bool read = CheckTorchSample(ctx, dump, s, name, id, compare, found, outcomes, first_traced);
      if (first_traced && !read) return false;
      traced_read |= first_traced;
    }
  }
  if (outcomes.size() < 2) return traced_read;
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
                               worst, SizeOneHint(ctx.torch.dumps.front()))));
  return true;
}

// Layer by layer against the dump through the unfused reference (an
// exporter problem shows there, apart from any fusion).
// The run also keeps, for the layer curve (check_locate.cc), the tensors the
// deployed plan leaves and the outputs, when it runs the reference's own
// unoptimized config: the curve then reads the reference from them.
void CheckTorchLayers(Context& ctx, NumericsFound& found) {
  std::vector<CheckFinding>& f = found.stage.findings;
  TorchCompareOptions torch_options{.policy = ctx.options.policy, .label = ctx.subject.label};
  const RunConfig& config = ctx.options.torch->config;
  KeptValues kept;
  if (ctx.target.plan && config == ctx.options.reference.config && config.opt_level == OptLevel::kDisable) {
    kept.names = ctx.target.plan->map.surviving;
    for (const auto& out : ctx.subject.info.outputs) kept.names.push_back(out.name);
    torch_options.keep = &kept;
  }
  const TorchDump& dump = ctx.torch.dumps.front();  // its traced sample was read (CheckTorchOutputs)
  auto layers = CompareWithTorch(ctx.subject.model, dump, config, torch_options);
  if (layers && torch_options.keep) ctx.torch.kept_reference.emplace(std::move(kept));
  if (!layers) {
    // A dump file that cannot be read (a FIFO, a folder, a malformed .npy) is
    // bad input, not a divergence: exit 2, never a FAIL CI reads as one.
    const ErrorCode code = layers.error().code();
    if (code == ErrorCode::kInvalidArgument || code == ErrorCode::kNotFound || code == ErrorCode::kCorrupt)
      ctx.input_error = layers.error();
    f.push_back(Fail("numerics.torch.layers", layers.error().message()));
    return;
  }
  found.alignment = *layers;
  ExcursionNotes(*layers, found.notes);
  const size_t aligned = layers->layers.size() - layers->Count(AlignHow::kNone);
  if (auto s = CheckSomeLayerAligned(dump, aligned, ctx.subject.label); !s) ctx.input_error = s.error();
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

}  // namespace parity::check_internal
