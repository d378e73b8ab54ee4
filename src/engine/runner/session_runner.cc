// The in-process ORT runner: one session per job (kept for the next job of
// the same model and names when the job asks, RunnerJob::keep_session),
// created under the runner's config on the process's ORT
// (session_run.h's CreateSession).
// A child process runs the very same code (runner_worker.h).
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <set>

#include "engine/runner/runner.h"
#include "engine/runner/session_run.h"
#include "onnx/inspect.h"
#include "onnx/model.h"

namespace parity {

std::string_view RanKindName(RanWhat::Kind kind) {
  switch (kind) {
    case RanWhat::Kind::kOrtSession: return "ort";
    case RanWhat::Kind::kOrtChild: return "ort_child";
    case RanWhat::Kind::kTorchDump: return "torch";
    case RanWhat::Kind::kStored: return "stored";
  }
  return "?";
}

namespace {

// A model's name in errors: its file's name, or what a model in memory is called.
std::string Label(const RunnerJob& job) {
  // A model in memory or ORT's own input: `model` only names it, whole.
  return job.loaded != nullptr || job.source != nullptr ? job.model.string() : job.model.filename().string();
}

// What a run's errors name: the model, and the sample when the job says it.
std::string RunLabel(const RunnerJob& job) {
  return job.sample.empty() ? Label(job) : fmt::format("{}, sample '{}'", Label(job), job.sample);
}

class SessionRunner final : public Runner {
 public:
  explicit SessionRunner(const RunConfig& config)
      : ran_{.kind = RanWhat::Kind::kOrtSession, .ort = CurrentOrt(), .config = config} {
    ran_.config.ort_library = ran_.ort.library;
  }
  const RanWhat& ran() const override { return ran_; }

  Result<TensorSet> Run(const RunnerJob& job, const TensorSet& inputs) override {
    const std::string label = RunLabel(job);
    if (IsKept(job)) return WithContext(kept_->Run(inputs, job.names, job.buffers, job.timeout_s), label);
    kept_.reset();  // before another session holds its own copy of the weights
    PARITY_ASSIGN_OR_RETURN(ort::Session session, Create(job));
    // A borrowed value holds the session's ORT objects itself (ort::OutputBuffers).
    auto values = WithContext(session.Run(inputs, job.names, job.buffers, job.timeout_s), label);
    if (job.keep_session) Keep(job, std::move(session));
    return values;
  }

  const ort::Session* kept_session() const override { return kept_ ? &*kept_ : nullptr; }

  Status Prepare(const RunnerJob& job) override {
    if (!job.keep_session || IsKept(job)) return {};
    kept_.reset();
    PARITY_ASSIGN_OR_RETURN(ort::Session session, Create(job));
    Keep(job, std::move(session));
    return {};
  }

 private:
  bool IsKept(const RunnerJob& job) const {
    if (kept_source_ != job.source || kept_record_ != job.record_assignment) return false;
    return kept_ && job.keep_session && kept_plan_ == job.save_plan && kept_model_ == job.model &&
           kept_loaded_ == job.loaded && kept_names_ == job.names && kept_arena_ == job.cpu_mem_arena &&
           kept_capture_ == job.capture_optimizer_log;
  }

  void Keep(const RunnerJob& job, ort::Session session) {
    kept_.emplace(std::move(session));
    kept_model_ = job.model;
    kept_plan_ = job.save_plan;
    kept_loaded_ = job.loaded;
    kept_names_ = job.names;
    kept_source_ = job.source;
    kept_record_ = job.record_assignment;
    kept_arena_ = job.cpu_mem_arena;
    kept_capture_ = job.capture_optimizer_log;
  }

  // A session of ORT's own input (RunnerJob::source), parsed as it is.
  Result<ort::Session> CreateFromSource(const RunnerJob& job, const std::string& label) {
    RunConfig config = ran_.config;
    if (!job.save_plan.empty()) PARITY_RETURN_IF_ERROR(AskForOptimizedModel(config, job.save_plan, job.plan_weights));
    auto session = WithContext(ort::Session::Create(*job.source, config,
                                                    {.capture_optimizer_log = job.capture_optimizer_log,
                                                     .cpu_mem_arena = job.cpu_mem_arena,
                                                     .record_assignment = job.record_assignment}),
                               fmt::format("{} [{}]", label, ran_.config.Label()));
    DropPlanWeightsLink(job);
    return session;
  }

  // A session of job.model with job.names as outputs (a plan job: ORT saves
  // its optimized model, weights dropped).
  Result<ort::Session> Create(const RunnerJob& job) {
    const std::string label = Label(job);
    if (job.source != nullptr) return CreateFromSource(job, label);
    const ort::SessionExtras extras{.capture_optimizer_log = job.capture_optimizer_log,
                                    .cpu_mem_arena = job.cpu_mem_arena,
                                    .record_assignment = job.record_assignment};
    std::optional<Model> loaded;
    if (job.loaded == nullptr) {
      PARITY_ASSIGN_OR_RETURN(Model m, Model::Load(job.model));
      loaded.emplace(std::move(m));
    }
    const Model& model = job.loaded != nullptr ? *job.loaded : *loaded;
    RunConfig config = ran_.config;
    if (!job.save_plan.empty()) {
      if (!job.names.empty()) return InvalidArgument(fmt::format("{}: a plan job returns the outputs only", label));
      PARITY_RETURN_IF_ERROR(AskForOptimizedModel(config, job.save_plan, job.plan_weights));
    }
    std::vector<std::string> extra;
    if (!job.names.empty()) {
      std::set<std::string> outputs;
      for (const auto& v : Inspect(model).outputs) outputs.insert(v.name);
      for (const auto& n : job.names)
        if (!outputs.contains(n)) extra.push_back(n);
    }
    if (!extra.empty()) {  // not a plan job
      // The model's own file (or serialization) with the outputs appended
      // (ExposedSource): no clone of the model to serialize again.
      PARITY_ASSIGN_OR_RETURN(ort::ModelSource plain, SourceOf(model, label));
      PARITY_ASSIGN_OR_RETURN(ort::ModelSource exposed, ExposedSource(model, plain, extra, label));
      loaded.reset();  // one copy of the weights at a time
      return WithContext(ort::Session::Create(exposed, config, extras),
                         fmt::format("{} [{}]", label, config.Label()));
    }
    PARITY_ASSIGN_OR_RETURN(ort::Session session, CreateSession(model, config, label, extras));
    DropPlanWeightsLink(job);
    return session;
  }

  // A plan whose weights went to /dev/null: the link goes once ORT wrote.
  static void DropPlanWeightsLink(const RunnerJob& job) {
    if (job.save_plan.empty() || job.plan_weights != PlanWeights::kDropped) return;
    std::error_code ec;
    std::filesystem::remove(PlanWeightsFile(job.save_plan), ec);
  }

  RanWhat ran_;
  std::optional<ort::Session> kept_;
  std::filesystem::path kept_model_;
  std::filesystem::path kept_plan_;
  const Model* kept_loaded_ = nullptr;
  std::vector<std::string> kept_names_;
  bool kept_arena_ = false;
  const ort::ModelSource* kept_source_ = nullptr;
  bool kept_record_ = false;
  bool kept_capture_ = false;
};

class StoredRunner final : public Runner {
 public:
  StoredRunner(TensorSet values, RanWhat what) : values_(std::move(values)), ran_(std::move(what)) {}
  const RanWhat& ran() const override { return ran_; }

  Result<TensorSet> Run(const RunnerJob& job, const TensorSet&) override {
    TensorSet out;
    for (const auto& name : job.names) {
      const Tensor* t = values_.Find(name);
      if (t == nullptr)
        return NotFound(fmt::format("{}: no tensor '{}'", ran_.source.string(), name));
      out.Set(name, *t);
    }
    return out;
  }

 private:
  TensorSet values_;
  RanWhat ran_;
};

}  // namespace

std::unique_ptr<Runner> MakeSessionRunner(const RunConfig& config) { return std::make_unique<SessionRunner>(config); }

std::unique_ptr<Runner> MakeStoredRunner(TensorSet values, RanWhat what) {
  return std::make_unique<StoredRunner>(std::move(values), std::move(what));
}

}  // namespace parity
