// One session for the reference and the target (check_reference_same_plan.h). The
// reference config exists to show what the target's optimizations change;
// when ORT's own log of creating the target's session says that none of its
// graph transformers modified the graph, the reference would run the same
// kernels on the same graph and give the same values (the 1.07-billion-
// parameter bench model: every sample's max_abs 0 between the two sessions),
// so the check loads the model once instead of twice (docs/bench.md).
#include "engine/check/check_reference_same_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include "ort/runtime.h"

namespace parity::check_internal {
namespace {

// The config as far as it decides kernels and numerics: its optimizations cleared.
RunConfig WithoutOptimizations(RunConfig c) {
  c.opt_level = OptLevel::kDisable;
  c.disabled_optimizers.clear();
  return c;
}

// What a probe of `config` found: the optimizers that modified the graph,
// and how long it took; an error when ORT refused the model (the check's
// own loads then report it).
struct Probe {
  std::vector<std::string> modified;
  double ms = 0;
};

// A session of `config` with prepacking off (its weights are not packed,
// the cheap part of a load) and ORT's optimizer log captured, created through
// the Runner and released before anything else loads.
Result<Probe> ProbeOptimizers(const Context& ctx, RunConfig config) {
  config.session_entries["session.disable_prepacking"] = "1";
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Runner> runner = MakeSessionRunner(config);
  PARITY_RETURN_IF_ERROR(runner->Prepare({.model = ctx.subject.label,
                                          .loaded = &ctx.subject.model,
                                          .keep_session = true,
                                          .capture_optimizer_log = true}));
  Probe probe{.modified = runner->kept_session()->modified_optimizers()};
  runner.reset();
  probe.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

// The target's runner, its reference pass run with the target's own
// session: a job of the reference's asks for no CPU arena, which would make
// the runner load the model again; the shared session keeps the target's.
class SharedRunner : public Runner {
 public:
  explicit SharedRunner(std::unique_ptr<Runner> target) : target_(std::move(target)) {}
  const RanWhat& ran() const override { return target_->ran(); }
  Result<TensorSet> Run(const RunnerJob& job, const TensorSet& inputs) override {
    return target_->Run(AsKept(job), inputs);
  }
  Status Prepare(const RunnerJob& job) override { return target_->Prepare(AsKept(job)); }
  const ort::Session* kept_session() const override { return target_->kept_session(); }

 private:
  static RunnerJob AsKept(RunnerJob job) {
    job.cpu_mem_arena = true;
    return job;
  }
  std::unique_ptr<Runner> target_;
};

}  // namespace

bool DiffersOnlyInOptimizations(const CheckOptions& o) {
  const RunConfig& ref = o.reference.config;
  const RunConfig& target = o.target;
  if (o.reference.model_file() != nullptr || !ref.ort_library.empty() || !target.ort_library.empty()) return false;
  if (!ref.optimized_model_path.empty() || !target.optimized_model_path.empty()) return false;
  // ORT's CPU EP alone: another EP's layout transformation (NHWC) or its own
  // compiler may change the plan by the level without a graph transformer's
  // "modified" line in the log, which is all the probe reads.
  if (target.providers != std::vector<std::string>{"cpu"}) return false;
  return ref != target && WithoutOptimizations(ref) == WithoutOptimizations(target);
}

std::unique_ptr<Runner> LoadSharedSession(Context& ctx, std::vector<CheckFinding>& f,
                                          std::vector<std::string>& notes) {
  const CheckOptions& o = ctx.options;
  if (!DiffersOnlyInOptimizations(o)) return nullptr;
  std::vector<std::string> evidence;
  for (const RunConfig* config : {&o.target, &o.reference.config}) {
    if (WithoutOptimizations(*config) == *config) continue;  // nothing of it can change the graph
    auto probe = ProbeOptimizers(ctx, *config);
    if (!probe || !probe->modified.empty()) return nullptr;
    evidence.push_back(fmt::format("[{}] in {:.0f} ms", config->Label(), probe->ms));
  }
  std::unique_ptr<Runner> runner = MakeSessionRunner(o.target);
  if (!runner->Prepare({.model = ctx.subject.label, .loaded = &ctx.subject.model, .keep_session = true,
                        .cpu_mem_arena = true}))
    return nullptr;  // the check's own loads report why
  const double load_ms = runner->kept_session()->creation_ms();
  const std::string why = fmt::format(
      "the target's optimizers changed nothing in the graph (ORT's optimizer log of a probe session, prepacking "
      "off: {}): the reference config [{}] runs the same kernels, one session served both "
      "(each sample run once: its values are the reference's and the target's)",
      fmt::join(evidence, ", "), o.reference.config.Label());
  f.push_back(Pass("syntax.ort_load.reference", why));
  f.push_back(Pass("syntax.ort_load.target", fmt::format("ORT {} loads the model at [{}] in {:.1f} ms, once",
                                                          ort::OrtVersion(), o.target.Label(), load_ms)));
  notes.push_back(why);
  ctx.flags.one_session = true;
  return std::make_unique<SharedRunner>(std::move(runner));
}

Result<TensorSet> TargetRun(const Context& ctx, const Sample& sample, const Result<TensorSet>& ref, double* run_ms) {
  if (ctx.flags.one_session) {
    if (run_ms != nullptr) *run_ms = ctx.reference.results.RunMs(sample.name);
    return ref;
  }
  const auto start = std::chrono::steady_clock::now();
  auto outputs = RunOn(ctx, *ctx.target.session(), sample);
  if (run_ms != nullptr)
    *run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return outputs;
}

}  // namespace parity::check_internal
