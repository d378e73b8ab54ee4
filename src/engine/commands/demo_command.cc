#include "engine/commands/demo_command.h"

#include <fmt/format.h>

#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

constexpr std::string_view kDemoFiles[] = {
    "models/conv_bn_relu.onnx",      "models/residual_cnn.onnx", "models/residual_cnn_planted.onnx",
    "conv_bn_relu/.parity-output",   "conv_bn_relu/report.json", "conv_bn_relu/report.html",
    "conv_bn_relu/junit.xml",        "planted_fault/.parity-output", "planted_fault/report.json",
    "planted_fault/report.html",     "planted_fault/junit.xml"};

// `path` under the staging folder, named where it will be once committed.
std::string Unstaged(const std::string& path, const StagedDir& staged) {
  const std::string from = staged.path().string();
  if (!path.starts_with(from)) return path;
  return staged.target().string() + path.substr(from.size());
}

}  // namespace

std::span<const std::string_view> DemoFiles() { return kDemoFiles; }

Result<Model> PlantFault(const Model& model, const std::string& node, double factor) {
  PARITY_ASSIGN_OR_RETURN(GraphView graph, BuildGraphView(model, {.infer_shapes = false}));
  auto index = graph.FindNode(node);
  if (!index) return InternalError(fmt::format("demo: the built-in model has no node '{}'", node));
  return ScaleInitializer(model, graph.nodes[*index].inputs.at(1), factor);
}

Result<DemoCase> HealthyDemoCase(const fs::path& models, int runs) {
  const fs::path seed_path = models / "conv_bn_relu.onnx";
  PARITY_RETURN_IF_ERROR(ConvBnRelu().Save(seed_path));
  DemoCase c{.title = "the seed's Conv+BN+ReLU at ORT `all` against the unfused run", .name = "conv_bn_relu"};
  c.options.model_path = seed_path.string();
  c.options.target.opt_level = OptLevel::kAll;
  c.options.latency_runs = runs;
  return c;
}

Result<DemoCase> PlantedDemoCase(const fs::path& models, const CheckOptions& healthy) {
  const Model reference = ResidualCnn();
  PARITY_ASSIGN_OR_RETURN(Model planted, PlantFault(reference, std::string(kDemoPlantedNode), kDemoPlantedScale));
  const fs::path reference_path = models / "residual_cnn.onnx";
  const fs::path planted_path = models / "residual_cnn_planted.onnx";
  PARITY_RETURN_IF_ERROR(reference.Save(reference_path));
  PARITY_RETURN_IF_ERROR(planted.Save(planted_path));
  DemoCase c{.title = fmt::format("a residual CNN whose '{}' weights were scaled by {}, against the healthy model",
                                  kDemoPlantedNode, kDemoPlantedScale),
             .name = "planted_fault",
             .options = healthy};
  c.options.model_path = planted_path.string();
  c.options.reference = Reference{.kind = Reference::Kind::kModel, .path = reference_path};
  return c;
}

Result<CheckReport> CheckStaged(const CheckOptions& options, const StagedDir& staged) {
  PARITY_ASSIGN_OR_RETURN(CheckReport report, RunCheck(options));
  if (report.model) {
    report.model->path = Unstaged(report.model->path, staged);
    report.model->reference_model = Unstaged(report.model->reference_model, staged);
  }
  if (report.locate) {
    report.locate->model = Unstaged(report.locate->model, staged);
    report.locate->target_model = Unstaged(report.locate->target_model, staged);
  }
  return report;
}

bool PlantedFaultFound(const CheckReport& report) {
  if (report.overall != Verdict::kFail) return false;
  for (const auto& failed : report.FailedTests())
    if (failed.message.find(kDemoPlantedNode) != std::string::npos) return true;
  return false;
}

}  // namespace parity
