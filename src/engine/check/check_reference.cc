// check's ORT reference (check_internal.h ReferenceSide): which runtime runs
// it is decided once, here, from its config (MakeOrtRunner): ORT in this
// process, timed while its session alone is alive, or another release in a
// child `parity runner-worker` (issue 43, docs/locate.md "Two runtimes").
// Either way the reference is a Runner that runs every sample on one kept
// session before the target's session exists, its values kept in a
// RunResults.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "engine/bench/latency.h"
#include "engine/check/check_internal.h"
#include "engine/quant/cast.h"
#include "engine/runner/runner.h"
#include "onnx/graph.h"
#include "ort/run_count.h"
#include "ort/runtime.h"

namespace parity::check_internal {
namespace {

// max(10 s, 50 x the first ordinary sample's run on the reference).
double DefaultTimeout(std::chrono::steady_clock::duration typical) {
  return std::max(kMinDefaultTimeout, kTimeoutFactor * std::chrono::duration<double>(typical).count());
}

// The reference's job in this process: its model in memory on one kept
// session. The reference runs a few times only: no CPU arena to grow and
// hold (RunnerJob::cpu_mem_arena); the target keeps ORT's default.
RunnerJob ReferenceJob(const Context& ctx) {
  return {.model = ctx.subject.label, .loaded = &ctx.subject.ReferenceModel(), .keep_session = true};
}

// With one session for both (check_reference_same_plan.h) the runtime stage
// times it once, as the target's, its first run the pass's (TimeSession):
// here only what the layer curve's estimate reads (CurveSkipReason), the
// session's creation and the pass's run of the first ordinary sample (a first
// run: an estimate on the high side), without a run of its own.
std::optional<PerformanceResult> SharedSessionEstimate(const Context& ctx, const ort::Session& session) {
  const Sample* first = FirstOrdinarySample(ctx);
  const double run_ms = first != nullptr ? ctx.reference.results.RunMs(first->name) : 0;
  if (run_ms <= 0) return std::nullopt;
  return PerformanceResult{.config = ctx.options.target.Label(),
                           .sample = first->name,
                           .session_creation_ms = session.creation_ms(),
                           .latency = SummarizeLatency({run_ms})};
}

// Every sample on the reference (`run`), and, given its session, its timing
// (its runtime findings and performance), into ctx.reference.
using ReferenceRun = std::function<Result<TensorSet>(const Sample&)>;
void RunReferencePass(Context& ctx, const ReferenceRun& run, const ort::Session* reference) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t runs_before = ort::OrtRuns();
  int done = 0;
  const bool default_timeout = ctx.options.sample_timeout_s < 0;
  bool measured = false;
  ctx.bounds.sample_timeout_s = default_timeout ? kFirstRunTimeout : ctx.options.sample_timeout_s;
  for (const auto& sample : ctx.subject.samples) {
    if (ctx.options.progress) ctx.options.progress("reference", done++, static_cast<int>(ctx.subject.samples.size()));
    const auto run_start = std::chrono::steady_clock::now();
    auto outputs = run(sample);
    const auto took = std::chrono::steady_clock::now() - run_start;
    if (outputs && default_timeout && !measured && SampleKindOf(sample.name) != SampleKind::kAnomaly) {
      ctx.bounds.sample_timeout_s = DefaultTimeout(took);
      measured = true;
    }
    // A run stopped at a limit is the numerics stage's to report (ReportStopped).
    ctx.reference.results.Add(sample.name, std::move(outputs), std::chrono::duration<double, std::milli>(took).count());
  }
  const Sample* timed = reference != nullptr ? TimingSample(ctx) : nullptr;
  if (timed != nullptr && ctx.flags.one_session) {
    ctx.reference.performance = SharedSessionEstimate(ctx, *reference);
  } else if (timed != nullptr) {
    // The pass's own run of the sample is the first of determinism's two
    // (the dump's traced sample is not one of the pass's).
    const TensorSet* first = !ctx.torch.traced_sample ? ctx.reference.results.InMemory(timed->name) : nullptr;
    ctx.reference.performance = TimeSession(ctx, "reference", ctx.options.reference.config, *reference, *timed,
                                            ctx.reference.runtime, first);
  }
  ctx.reference.pass = {.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                        .runs = ort::OrtRuns() - runs_before};
}

}  // namespace

std::string ReferenceSide::Versus(const CheckOptions& o) const {
  return fmt::format("[{}] vs [{}]{}", o.target.Label(), o.reference.config.Label(),
                     ort ? fmt::format(" on onnxruntime {}", ort->version) : std::string());
}

std::string ReferenceSide::CurveUnavailable() const {
  if (!ort) return "";
  return "the reference runs on another ONNX Runtime (a child process); `parity locate "
         "--reference-ort-library` compares the two node by node";
}

Sample FedTo(const Subject& subject, const ort::Session& session, const Sample& sample) {
  return subject.reference.ModelsDiffer() ? FitToSession(session, sample) : sample;
}

Result<Sample> FedToModel(const Subject& subject, const Model& model, const Sample& sample) {
  if (!subject.reference.ModelsDiffer()) return sample;
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(model, {.infer_shapes = false}));
  return FitToGraph(view, sample);
}

TensorSet AsReference(const Subject& subject, const TensorSet& test, const TensorSet& ref) {
  return subject.reference.ModelsDiffer() ? CastLike(test, ref) : test;
}

const Sample* TimingSample(const Context& ctx) {
  const std::optional<Sample>& traced = ctx.torch.traced_sample;
  if (traced && !ctx.bounds.stopped.contains(traced->name)) return &*traced;
  return FirstOrdinarySample(ctx);
}

const TensorSet* TargetFirstRun(const Context& ctx, const Sample& timed) {
  if (ctx.torch.traced_sample) return ctx.torch.target_outputs ? &*ctx.torch.target_outputs : nullptr;
  if (&timed == FirstOrdinarySample(ctx) && ctx.target.first_outputs) return &*ctx.target.first_outputs;
  return nullptr;
}

std::unique_ptr<Runner> LoadReference(Context& ctx, std::vector<CheckFinding>& f) {
  const RunConfig& config = ctx.options.reference.config;
  auto made = MakeOrtRunner(config);  // in this process unless config.ort_library names another ORT
  if (!made) {
    ctx.input_error = made.error().With("--reference-ort-library");
    return nullptr;
  }
  std::unique_ptr<Runner> runner = std::move(*made);
  const std::string id = "syntax.ort_load.reference";
  if (runner->ran().kind == RanWhat::Kind::kOrtChild) {
    // Its session is made by its first sample, in the child.
    const OrtFact& ort = runner->ran().ort;
    ctx.reference.ort = ort;
    f.push_back(Pass(id, fmt::format("onnxruntime {} ({}) runs the reference at [{}] in a child process",
                                     ort.version, ort.library, config.Label())));
    return runner;
  }
  if (Status prepared = runner->Prepare(ReferenceJob(ctx)); !prepared) {
    f.push_back(Fail(id, prepared.error().message()));
    return nullptr;
  }
  f.push_back(Pass(id, fmt::format("ORT {} loads the model at [{}] in {:.1f} ms", ort::OrtVersion(), config.Label(),
                                   runner->kept_session()->creation_ms())));
  return runner;
}

void PassReference(Context& ctx, Runner& reference) {
  ctx.reference.loaded = true;
  const ort::Session* session = reference.kept_session();
  if (session == nullptr) {
    // A child's: every sample on its one kept session, untimed (its latency is
    // another process's); the outputs named as the model declares them.
    std::vector<std::string> names;
    for (const auto& out : ctx.subject.info.outputs) names.push_back(out.name);
    ctx.reference.results.SetOutputNames(std::move(names));
    const RunnerJob job{.model = ctx.options.model_path, .keep_session = true};
    RunReferencePass(ctx, [&](const Sample& s) { return reference.Run(job, s.tensors); }, nullptr);
    return;
  }
  ctx.reference.results.SetOutputNames(session->output_names());
  RunReferencePass(
      ctx,
      [&](const Sample& s) {
        RunnerJob job = ReferenceJob(ctx);
        job.sample = s.name;
        job.timeout_s = ctx.bounds.sample_timeout_s;
        return reference.Run(job, FedTo(ctx.subject, *session, s).tensors);
      },
      session);
}

}  // namespace parity::check_internal
