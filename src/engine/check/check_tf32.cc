// TF32 named from evidence (issue 44): the CUDA EP runs float32 MatMul and
// Conv as TF32 on Ampere and newer GPUs unless use_tf32=0. An error whose
// size merely looks like TF32 proves nothing (a planted weight can give the
// same SNR), so the check re-runs the worst failing sample on the same
// model and config with use_tf32=0 alone changed (the reference's too when
// it runs on CUDA with TF32 itself): TF32 is named only when
// that run's error falls well below the deployed one (it is then the cause,
// and the option is the fix); otherwise the check says TF32 is not it.
#include <fmt/format.h>

#include <cmath>

#include "compare/judge.h"
#include "engine/check/check_internal.h"
#include "engine/quant/cast.h"
#include "engine/runner/runner.h"
#include "onnx/graph.h"

namespace parity::check_internal {
namespace {

// The error of the fp32 run must fall at least this much below the TF32
// run's: TF32's unit roundoff (2^-11) is 2^13 times float32's, so a real
// TF32 error falls by orders of magnitude; a 2x change is noise.
constexpr double kFallFactor = 8.0;

double RelativeError(double snr_db) { return std::pow(10.0, -snr_db / 20.0); }

bool TargetRunsTf32(const RunConfig& target) {
  bool cuda = false;
  for (const auto& p : target.providers) cuda = cuda || p == "cuda";
  if (!cuda) return false;
  const auto options = target.provider_options.find("cuda");
  if (options == target.provider_options.end()) return true;  // ORT's default: use_tf32=1
  const auto tf32 = options->second.find("use_tf32");
  return tf32 == options->second.end() || tf32->second != "0";
}

struct Worst {
  const SampleResult* sample = nullptr;
  const OutputResult* output = nullptr;
};

// The failing output against the ONNX reference (its name: `ort`) with the lowest SNR.
Worst WorstFailure(const std::vector<SampleResult>& samples, const std::string& ort) {
  Worst w;
  for (const SampleResult& s : samples)
    for (const OutputResult& out : s.outputs)
      if (out.against == ort && out.comparison.status == Verdict::kFail &&
          std::isfinite(out.comparison.metrics.snr_db) &&
          (w.output == nullptr || out.comparison.metrics.snr_db < w.output->comparison.metrics.snr_db))
        w = {&s, &out};
  return w;
}

const Sample* FindSample(const std::vector<Sample>& samples, const std::string& name) {
  for (const Sample& s : samples)
    if (s.name == name) return &s;
  return nullptr;
}

RunConfig WithoutTf32(RunConfig config) {
  config.provider_options["cuda"]["use_tf32"] = "0";
  return config;
}

// What `model` gives for `sample` under `config` with use_tf32=0, on a
// runner of its own (its session released on return). With
// --reference-model the floating inputs are first cast to the dtypes the
// model declares (RunOn).
Result<TensorSet> RunWithoutTf32(const Subject& subject, const Model& model, const RunConfig& config,
                                 const Sample& sample) {
  std::unique_ptr<Runner> runner = MakeSessionRunner(WithoutTf32(config));
  // The run's errors name the model and the sample, as RunOn's do.
  const RunnerJob job{.model = subject.label, .loaded = &model, .sample = sample.name};
  PARITY_ASSIGN_OR_RETURN(Sample fed, FedToModel(subject, model, sample));
  return runner->Run(job, fed.tensors);
}

// What the reference gives for `sample` with TF32 off: its kept outputs when
// it does not run TF32 itself (the CPU), else a run of it with use_tf32=0
// (CUDA at `disable` against CUDA at `all`: both sides lose TF32).
Result<TensorSet> ReferenceWithoutTf32(const Context& ctx, const Sample& sample) {
  if (!TargetRunsTf32(ctx.options.reference.config)) return ctx.reference.results.Get(sample.name);
  return RunWithoutTf32(ctx.subject, ctx.subject.ReferenceModel(), ctx.options.reference.config, sample);
}

// The normwise error of `output` on `sample` with TF32 off on both sides; an
// error when a run or the comparison could not be made.
Result<double> ErrorWithoutTf32(const Context& ctx, const Sample& sample, const std::string& output) {
  PARITY_ASSIGN_OR_RETURN(TensorSet want, ReferenceWithoutTf32(ctx, sample));
  PARITY_ASSIGN_OR_RETURN(TensorSet got, RunWithoutTf32(ctx.subject, ctx.subject.model, ctx.options.target, sample));
  const Tensor* test = got.Find(output);
  const Tensor* ref = want.Find(output);
  if (test == nullptr || ref == nullptr) return InvalidArgument(fmt::format("output '{}' is missing", output));
  PARITY_ASSIGN_OR_RETURN(JudgedTensor judged, JudgeTensor(output, *ref, *test, ctx.judging.policy));
  return RelativeError(judged.metrics.snr_db);
}

}  // namespace

Tf32Probe ProbeTf32(const Context& ctx, const std::vector<SampleResult>& samples) {
  Tf32Probe r;
  if (!TargetRunsTf32(ctx.options.target)) return r;
  const Worst worst = WorstFailure(samples, OrtAgainst(ctx.options));
  const Sample* sample = worst.sample ? FindSample(ctx.subject.samples, worst.sample->name) : nullptr;
  if (sample == nullptr) return r;  // nothing failed against the ONNX reference: nothing to explain
  const std::string& output = worst.output->output;
  const double with_tf32 = RelativeError(worst.output->comparison.metrics.snr_db);
  const Result<double> without = ErrorWithoutTf32(ctx, *sample, output);
  if (!without) {
    r.note = fmt::format("TF32 not tested: the run with use_tf32=0 failed: {}", without.error().message());
    return r;
  }
  const bool named = *without * kFallFactor <= with_tf32;
  r.note = fmt::format(
      "sample '{}', output '{}': normwise relative error {:.2e} as deployed (TF32 allowed), {:.2e} with "
      "use_tf32=0 alone changed{}: {}",
      sample->name, output, with_tf32, *without,
      TargetRunsTf32(ctx.options.reference.config) ? " on both sides" : "",
      named ? "TF32 is the cause" : "TF32 is not the cause (the error stays without it)");
  if (named)
    r.tf32 = ArithmeticVerdict{
        .arithmetic = "tf32",
        .relative_error = with_tf32,
        .unit_roundoff = std::ldexp(1.0, -11),
        .evidence = "a re-run with use_tf32=0 alone changed removes the error",
        .cause = fmt::format("the CUDA EP runs float32 MatMul/Conv as TF32 by default; with use_tf32=0 the error "
                             "falls to {:.2e} (measured on sample '{}')",
                             *without, sample->name),
        .fix = "run fp32 with --provider-option cuda:use_tf32=0"};
  return r;
}

}  // namespace parity::check_internal
