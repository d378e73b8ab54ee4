#include "engine/run/optimized_plan.h"

#include "engine/run/compiled_plan.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>

#include "engine/runner/session_run.h"

namespace parity {

namespace {

// An in-process Runner keeping the session of `model` under `config`, made
// with ORT's node assignment recorded (the plan's identity for observe.h's
// comparison) and, for `plan` non-empty, its optimized model saved there.
Result<std::unique_ptr<Runner>> KeptPlanRunner(const ort::ModelSource& model, const RunConfig& config,
                                               const std::string& label, const ort::SessionExtras& extras,
                                               const std::filesystem::path& plan,
                                               PlanWeights weights = PlanWeights::kDropped) {
  std::unique_ptr<Runner> runner = MakeSessionRunner(config);
  const RunnerJob job{.model = label,
                      .save_plan = plan,
                      .plan_weights = weights,
                      .keep_session = true,
                      .cpu_mem_arena = extras.cpu_mem_arena,
                      .source = &model,
                      .record_assignment = true,
                      .capture_optimizer_log = extras.capture_optimizer_log};
  PARITY_RETURN_IF_ERROR(runner->Prepare(job));
  return runner;
}

// A compiling EP: no optimized model to save; the plan is ORT's node
// assignment (compiled_plan.h), and `optimized` stays empty.
Result<PlannedSession> CreateAssignedSession(const ort::ModelSource& model, const GraphView& original,
                                             RunConfig config, const std::string& label,
                                             const ort::SessionExtras& extras) {
  config.optimized_model_path.clear();
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, KeptPlanRunner(model, config, label, extras, {}));
  const ort::Session& session = *runner->kept_session();
  if (session.ep_assignment().empty())
    return Unsupported(fmt::format("{} [{}]: this ONNX Runtime does not say which EP took which node "
                                   "(Session_GetEpGraphAssignmentInfo, ORT >= 1.24)",
                                   label, config.Label()));
  GraphView view = AssignedView(original, session.ep_assignment());
  FusionMap map = BuildFusionMap(original, view);
  std::vector<std::string> modified = session.modified_optimizers();
  std::vector<ort::EpAssignment> assignment = session.ep_assignment();
  return PlannedSession{.runner = std::move(runner),
                        .optimized_view = std::move(view),
                        .map = std::move(map),
                        .modified_optimizers = std::move(modified),
                        .ep_assignment = std::move(assignment)};
}

}  // namespace

Result<PlannedSession> CreatePlannedSession(const Model& model, const GraphView& original, RunConfig config,
                                            const std::string& label,
                                            const std::filesystem::path& optimized_path,
                                            const ort::SessionExtras& extras) {
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource source, SourceOf(model, label));
  return CreatePlannedSession(source, original, std::move(config), label, optimized_path, extras);
}

Result<PlannedSession> CreatePlannedSession(const ort::ModelSource& model, const GraphView& original,
                                            RunConfig config, const std::string& label,
                                            const std::filesystem::path& optimized_path,
                                            const ort::SessionExtras& extras) {
  const std::string config_label = config.Label();  // as the caller gave it
  if (PlansFromAssignment(config)) return CreateAssignedSession(model, original, config, label, extras);
  const RunConfig asked = config;
  // Only the graph's structure is read back: the weights go to a side file
  // (ORT resolves its name against the optimized model's directory) that is
  // a link to /dev/null, instead of being serialized into the model and
  // parsed again, or written to disk for nothing (a 4 GB model's weights on
  // every plan; issue 26).
  // A source whose large tensors are all references keeps them so (kReferenced).
  const bool references = !model.is_file() && !model.external_data_dir().empty();
  PARITY_ASSIGN_OR_RETURN(
      std::unique_ptr<Runner> runner,
      KeptPlanRunner(model, config, label, extras, optimized_path,
                     references ? PlanWeights::kReferenced : PlanWeights::kDropped));
  std::error_code ec;
  std::filesystem::remove(PlanWeightsFile(optimized_path), ec);
  auto optimized = Model::Load(optimized_path, {.external_data = false});
  if (!optimized)
    return RuntimeError(fmt::format("{} [{}]: cannot read the optimized model ORT saved: {}", label,
                                    config_label, optimized.error().message()));
  PARITY_ASSIGN_OR_RETURN(GraphView view, WithContext(BuildGraphView(*optimized, {.infer_shapes = false}),
                                                      "the optimized model ORT saved"));
  FusionMap map = BuildFusionMap(original, view);
  const ort::Session& session = *runner->kept_session();
  std::vector<std::string> modified = session.modified_optimizers();
  std::vector<ort::EpAssignment> assignment = session.ep_assignment();
  return PlannedSession{.runner = std::move(runner),
                        .optimized = std::move(*optimized),
                        .optimized_path = optimized_path,
                        .optimized_view = std::move(view),
                        .map = std::move(map),
                        .modified_optimizers = std::move(modified),
                        .ep_assignment = std::move(assignment),
                        .source = model,
                        .config = asked};
}

Result<Model> LoadOptimizedWithWeights(const PlannedSession& plan, const std::string& label) {
  if (plan.optimized_path.empty() || !plan.source)
    return Unsupported(fmt::format("{}: the target EP compiles subgraphs, so ORT saves no optimized model to "
                                   "observe instead",
                                   label));
  std::filesystem::path path = plan.optimized_path;
  path.replace_filename(plan.optimized_path.stem().string() + "_weights.onnx");
  {
    // Released at once: only the file it saved is read.
    auto saved = KeptPlanRunner(*plan.source, plan.config, label, {.cpu_mem_arena = false}, path, PlanWeights::kWritten);
    if (!saved) return std::unexpected(std::move(saved.error()));
  }
  auto m = Model::Load(path);
  if (!m)
    return RuntimeError(
        fmt::format("{}: cannot read the optimized model ORT saved: {}", label, m.error().message()));
  return m;
}

Result<FusionMap> PlanOf(const Model& model, const GraphView& original, const RunConfig& config,
                         const std::string& label, const std::filesystem::path& optimized_path) {
  PARITY_ASSIGN_OR_RETURN(PlannedSession p,
                          CreatePlannedSession(model, original, config, label, optimized_path));
  return std::move(p.map);
}

Status KeepUntouched(PlannedSession& plan, const Sample& sample, const std::string& label) {
  if (!plan.session() && plan.untouched) return {};  // run by the plan's maker (check's target pass)
  if (!plan.session()) return InternalError(fmt::format("{}: the untouched session was already released", label));
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(TensorSet outputs, RunSample(*plan.session(), sample, label));
  plan.untouched_run_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  plan.untouched = std::move(outputs);
  plan.output_names = plan.session()->output_names();
  plan.runner.reset();
  return {};
}

}  // namespace parity
