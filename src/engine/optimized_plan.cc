#include "engine/optimized_plan.h"

#include <fmt/format.h>
#include <stdlib.h>

#include "engine/runner.h"

namespace parity {

Result<ScratchDir> ScratchDir::Create(const std::string& tag) {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("parity_" + tag + ".XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return RuntimeError(fmt::format("cannot create a scratch directory like '{}'", tmpl));
  return ScratchDir(tmpl);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Result<PlannedSession> CreatePlannedSession(const Model& model, const GraphView& original, RunConfig config,
                                            const std::string& label,
                                            const std::filesystem::path& optimized_path,
                                            bool capture_optimizer_log) {
  config.optimized_model_path = optimized_path.string();
  ort::SessionExtras extras;
  extras.capture_optimizer_log = capture_optimizer_log;
  PARITY_ASSIGN_OR_RETURN(ort::Session session, CreateSession(model, config, label, extras));
  auto optimized = Model::Load(optimized_path);
  if (!optimized)
    return RuntimeError(fmt::format("{} [{}]: cannot read the optimized model ORT saved: {}", label,
                                    config.Label(), optimized.error().message()));
  PARITY_ASSIGN_OR_RETURN(GraphView view, WithContext(BuildGraphView(*optimized, {.infer_shapes = false}),
                                                      "the optimized model ORT saved"));
  FusionMap map = BuildFusionMap(original, view);
  std::vector<std::string> modified = session.modified_optimizers();
  return PlannedSession{std::move(session), std::move(*optimized), std::move(view), std::move(map),
                        std::move(modified)};
}

Result<FusionMap> PlanOf(const Model& model, const GraphView& original, const RunConfig& config,
                         const std::string& label, const std::filesystem::path& optimized_path) {
  PARITY_ASSIGN_OR_RETURN(PlannedSession p,
                          CreatePlannedSession(model, original, config, label, optimized_path));
  return std::move(p.map);
}

}  // namespace parity
