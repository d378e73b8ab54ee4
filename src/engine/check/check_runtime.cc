// The runtime stage (latency, session creation, memory, determinism per
// config) and the robustness stage (what each anomalous sample does under
// the target, against what it does unfused).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "compare/compare_sets.h"
#include "engine/bench/latency.h"
#include "engine/check/check_internal.h"
#include "engine/check/check_latency.h"
#include "engine/quant/cast.h"
#include "engine/runner/session_run.h"

namespace parity::check_internal {
namespace {

// How long the run that gave `first_run` took, when it was this session's
// own run of `sample` and the check timed it: the reference's pass on the
// reference's session, the numerics stage's run on the target's (with one
// session for both, the pass's; TargetRun). 0 otherwise (the target's run
// of PyTorch's traced sample is not timed).
double FirstRunMs(const Context& ctx, std::string_view which, const Sample& sample, const TensorSet* first_run) {
  if (first_run == nullptr) return 0;
  if (which == "reference") return ctx.reference.results.RunMs(sample.name);
  return ctx.target.first_outputs && first_run == &*ctx.target.first_outputs ? ctx.target.first_ms : 0;
}

// "raised", "nan/inf propagated" or "outputs finite".
std::string Behaviour(const Result<TensorSet>& outputs) {
  if (!outputs) return IsTimeout(outputs.error()) ? "timeout" : IsOutOfMemory(outputs.error()) ? "over memory" : "raised";
  for (const auto& [name, t] : *outputs) {
    if (!IsFloating(t.dtype())) continue;
    for (int64_t i = 0; i < t.size(); ++i)
      if (!std::isfinite(t.GetAsDouble(i))) return "nan/inf propagated";
  }
  return "outputs finite";
}

// Which limit stopped a run, for its finding.
std::string LimitWhy(double timeout_s, const Error& e) {
  if (IsTimeout(e)) return fmt::format("the time limit of {:g} s (--sample-timeout; 0: none)", timeout_s);
  const int64_t limit = ort::CurrentRunLimits().memory_bytes;
  return limit > 0 && e.message().find(ort::kRunOverMemory) != std::string::npos ? fmt::format("the memory limit of {} MiB (--sample-memory; 0: none)", limit >> 20)
                   : std::string("the memory ONNX Runtime could allocate");
}

}  // namespace

bool AllBitwiseEqual(const TensorSet& a, const TensorSet& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const Tensor* other = b.Find(name);
    if (other == nullptr || !t.BitwiseEquals(*other)) return false;
  }
  return true;
}

std::optional<PerformanceResult> TimeSession(const Context& ctx, const char* which, const RunConfig& config,
                                             const ort::Session& session, const Sample& sample,
                                             std::vector<CheckFinding>& f, const TensorSet* first_run) {
  PerformanceResult perf{.config = config.Label(),
                         .sample = sample.name,
                         .inputs = DescribeTensors(sample.tensors),
                         .session_creation_ms = session.creation_ms()};
  const std::string id = fmt::format("runtime.{}", which);
  auto first = first_run ? Result<TensorSet>(*first_run) : RunOn(ctx, session, sample);
  const auto second_start = std::chrono::steady_clock::now();
  auto second = RunOn(ctx, session, sample);
  const double second_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - second_start).count();
  if (!first || !second) {
    f.push_back(Fail(id, (!first ? first : second).error().message()));
    return std::nullopt;
  }
  perf.deterministic = AllBitwiseEqual(*first, *second);
  f.push_back(perf.deterministic
                  ? Pass(id + ".determinism", fmt::format("[{}]: two runs bitwise identical", perf.config))
                  : Fail(id + ".determinism",
                         fmt::format("[{}]: two runs of sample '{}' differ: ORT is not deterministic under this "
                                     "config (threads? parallel execution?)",
                                     perf.config, sample.name)));
  const Sample fed = FedTo(ctx.subject, session, sample);
  Result<LatencyStats> stats = MeasureLatency(
      session, fed.tensors, CheckLatency(ctx.options, which, second_ms, FirstRunMs(ctx, which, sample, first_run)));
  if (!stats) {
    f.push_back(Fail(id + ".latency", stats.error().message()));
    return std::nullopt;
  }
  perf.latency = std::move(*stats);
  perf.peak_rss_bytes = PeakRssBytes();
  perf.gpu_peak_bytes = session.CudaPeakBytes();
  f.push_back(Pass(id + ".latency",
                   fmt::format("[{}]: p50 {:.3f} ms, p95 {:.3f} ms, p99 {:.3f} ms over {} run{}{}; session created in "
                               "{:.1f} ms",
                               perf.config, perf.latency.p50_ms, perf.latency.p95_ms, perf.latency.p99_ms,
                               perf.latency.runs, perf.latency.runs == 1 ? "" : "s",
                               OwnRuns(perf.latency), perf.session_creation_ms)));
  return perf;
}

bool ReportStopped(Context& ctx, SampleResult& result, const std::string& id, const Result<TensorSet>& ref,
                   const Result<TensorSet>& test, std::vector<CheckFinding>& f) {
  const bool ref_stopped = !ref && IsStopped(ref.error());
  if (!ref_stopped && !(ref && !test && IsStopped(test.error()))) return false;
  const Error& e = (ref_stopped ? ref : test).error();
  result.timed_out = true;
  result.over_memory = !IsTimeout(e);
  result.behaviour = result.over_memory ? "over memory" : "timeout";
  result.error = e.message();
  const std::string word(result.StatusWord());
  const std::string how =
      fmt::format("the {} run was stopped at {}", ref_stopped ? "reference" : "target", LimitWhy(ctx.bounds.sample_timeout_s, e));
  if (ref_stopped && ctx.options.inputs_path.empty()) {
    result.status = Verdict::kUnchecked;
    f.push_back(Skip(id, fmt::format("{}, not judged: {}; a generated sample", word, how)));
  } else {
    result.status = Verdict::kFail;
    f.push_back(Fail(id, fmt::format("{}: {}{}", word, how,
                                     ref_stopped ? "" : fmt::format(" where [{}] ran it within it",
                                                                    ctx.options.reference.config.Label()))));
  }
  ctx.bounds.stopped.insert(result.name);
  return true;
}

RuntimeFound StageRuntime(Context& ctx) {
  RuntimeFound found{.stage = {.name = "runtime"}};
  std::vector<CheckFinding>& f = found.stage.findings;
  const Sample* sample = TimingSample(ctx);
  if (!ctx.reference.loaded || !ctx.target.session() || sample == nullptr) {
    f.push_back(Skip("runtime", "skipped: no session or no sample to time"));
    return found;
  }
  // The reference was timed while its session alone was alive (RunReferencePass).
  if (ctx.options.progress) ctx.options.progress("runtime", 0, 2);
  f.insert(f.end(), ctx.reference.runtime.begin(), ctx.reference.runtime.end());
  if (ctx.reference.performance) found.performance.push_back(*ctx.reference.performance);
  if (ctx.options.progress) ctx.options.progress("runtime", 1, 2);
  // What the numerics stage's run of the same sample gave: determinism's first run.
  const TensorSet* first = TargetFirstRun(ctx, *sample);
  if (auto perf = TimeSession(ctx, "target", ctx.options.target, *ctx.target.session(), *sample, f, first))
    found.performance.push_back(std::move(*perf));
  found.stage.status = StatusOf(f);
  return found;
}

RobustnessFound StageRobustness(Context& ctx) {
  RobustnessFound found{.stage = {.name = "robustness"}};
  std::vector<CheckFinding>& f = found.stage.findings;
  if (!ctx.reference.loaded || !ctx.target.session()) {
    f.push_back(Skip("robustness", "skipped: ORT could not load the model (see syntax)"));
    return found;
  }
  CompareOptions compare;
  compare.policy = ctx.judging.policy;
  for (const auto& sample : ctx.subject.samples) {
    if (SampleKindOf(sample.name) != SampleKind::kAnomaly) continue;
    SampleResult result{.name = sample.name,
                        .kind = std::string(SampleKindName(SampleKind::kAnomaly)),
                        .input_summary = DescribeTensors(sample.tensors)};
    auto ref = ctx.reference.results.Get(sample.name);
    // A reference stopped at a limit: the target is not made to wait as long.
    auto test = ref || !IsStopped(ref.error()) ? TargetRun(ctx, sample, ref) : ref;
    const std::string ref_behaviour = Behaviour(ref);
    result.behaviour = Behaviour(test);
    if (!test) result.error = test.error().message();
    const std::string id = fmt::format("robustness.{}", sample.name);
    const bool ref_stopped = !ref && IsStopped(ref.error());
    if (ref_stopped || (!test && IsStopped(test.error()))) {
      // Stopped at a limit: never a PASS. Under the reference too, the
      // sample is not judged; under the target alone, it fails.
      const Error& e = (ref_stopped ? ref : test).error();
      result.timed_out = true;
      result.over_memory = !IsTimeout(e);
      result.behaviour = result.over_memory ? "over memory" : "timeout";
      result.error = e.message();
      result.status = ref_stopped ? Verdict::kUnchecked : Verdict::kFail;
      const std::string why =
          fmt::format("{}: stopped at {} under [{}]", result.StatusWord(), LimitWhy(ctx.bounds.sample_timeout_s, e),
                      ref_stopped ? ctx.options.reference.config.Label() : ctx.options.target.Label());
      f.push_back(result.status == Verdict::kFail ? Fail(id, why) : Skip(id, why + "; not judged"));
      ctx.bounds.stopped.insert(sample.name);
    } else if (ref_behaviour == "nan/inf propagated" && result.behaviour == "outputs finite" &&
               !ctx.judging.output_rules.empty()) {
      // A quantized copy cannot carry NaN or Inf: its integers saturate. What
      // it does is inherent to the derived model, not a defect of it; said
      // as a warning (--strict fails it).
      f.push_back(Warn(id, fmt::format("[{}] outputs finite where the float reference propagates NaN/Inf: the "
                                       "derived model's quantization turns NaN/Inf inputs into finite values, so "
                                       "a bad input goes unnoticed downstream",
                                       ctx.options.target.Label())));
    } else if (ref_behaviour != result.behaviour) {
      result.status = Verdict::kFail;
      f.push_back(Fail(id, fmt::format("[{}] {} but [{}] {}{}", ctx.options.target.Label(), result.behaviour,
                                       ctx.options.reference.config.Label(), ref_behaviour,
                                       test ? "" : ": " + test.error().message())));
    } else if (ref && test) {
      // Same behaviour class; do the outputs still agree (NaN where NaN)?
      auto cmp = CompareSets(*ref, AsReference(ctx.subject, *test, *ref), compare);
      if (cmp) {
        for (const auto& t : cmp->tensors) result.outputs.push_back({t.name, "onnx:" + ctx.options.reference.config.Label(), t});
        if (!cmp->passed()) {
          result.status = Verdict::kFail;
          f.push_back(Fail(id, fmt::format("{} under both configs, but the outputs differ silently", result.behaviour)));
        } else {
          f.push_back(Pass(id, fmt::format("{} under both configs, outputs agree", result.behaviour)));
          if (sample.name == "anomaly_negative_ids")
            f.push_back(Warn(id + ".wraps",
                             "ONNX Runtime takes negative token ids (ONNX's Gather reads -1 as the last row) where "
                             "PyTorch's nn.Embedding raises: a deployed model answers a bad id with a wrong row "
                             "instead of an error; validate ids before the model if that matters"));
        }
      }
    } else {
      // Raised under both: the same behaviour, but nothing was compared.
      result.status = Verdict::kUnchecked;
      f.push_back(Skip(id, fmt::format("raised under both configs (not judged): {}", result.error)));
    }
    found.samples.push_back(std::move(result));
  }
  if (f.empty()) f.push_back(Skip("robustness", "no anomaly samples"));
  found.stage.status = StatusOf(f);
  return found;
}

}  // namespace parity::check_internal
