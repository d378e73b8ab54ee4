// parity demo: parity on its built-in models, with nothing to prepare.
//  1. the seed's Conv+BN+ReLU, checked as deployed (ORT `all` against the
//     unfused run): it should pass;
//  2. a residual CNN with a planted fault (one convolution's weights scaled
//     by 1.02), checked against the healthy model: it should fail, and the
//     report should name the planted node.
// Reports go to OUT/<case>/{report.html,report.json,junit.xml}.
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "core/output_dir.h"
#include "core/staged_dir.h"
#include "engine/check/check.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "report/console/check_console.h"
#include "report/report_writer.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

constexpr const char* kPlantedNode = "/layer2/1/conv2/Conv";
constexpr double kPlantedScale = 1.02;

struct DemoOptions {
  std::string out = "demo-report";
  int runs = 10;
};

// MODEL with the weights of `node` scaled by `factor`.
Result<Model> PlantFault(const Model& model, const std::string& node, double factor) {
  PARITY_ASSIGN_OR_RETURN(GraphView graph, BuildGraphView(model, {.infer_shapes = false}));
  auto index = graph.FindNode(node);
  if (!index) return InternalError(fmt::format("demo: the built-in model has no node '{}'", node));
  return ScaleInitializer(model, graph.nodes[*index].inputs.at(1), factor);
}

// Everything a demo folder holds besides its marker (CheckReplaceableOutputDir).
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

// Runs check and writes its reports into `name` under the staging folder;
// returns the report.
Result<CheckReport> CheckCase(const std::string& title, const CheckOptions& options, const StagedDir& staged,
                              const std::string& name) {
  fmt::print("\n== {}\n", title);
  PARITY_ASSIGN_OR_RETURN(CheckReport report, RunCheck(options));
  // The report names the models where they will be, not in the staging folder.
  if (report.model) {
    report.model->path = Unstaged(report.model->path, staged);
    report.model->reference_model = Unstaged(report.model->reference_model, staged);
  }
  if (report.locate) {
    report.locate->model = Unstaged(report.locate->model, staged);
    report.locate->target_model = Unstaged(report.locate->target_model, staged);
  }
  PrintCheckSummary(report, stdout);
  PARITY_RETURN_IF_ERROR(WriteCheckReport(report, staged.path() / name));
  fmt::print("report: {}\n", (staged.target() / name / "report.html").string());
  return report;
}

bool ReportNames(const CheckReport& report, const std::string& node) {
  for (const auto& failed : report.FailedTests())
    if (failed.message.find(node) != std::string::npos) return true;
  return false;
}

int RunDemo(const DemoOptions& o) {
  const fs::path out(o.out);
  // Only a new, empty or earlier demo folder is replaced (docs/security.md),
  // and only whole: everything goes to a staging folder beside it first.
  auto staged = StageOutputDir(out, "parity.demo", kDemoFiles);
  if (!staged) return ReportError(staged.error().With("--out"));
  const fs::path models = staged->path() / "models";
  std::error_code ec;
  fs::create_directories(models, ec);
  if (ec) return ReportError(Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", o.out, ec.message())));

  // 1. The healthy seed model, as deployed.
  const fs::path seed_path = models / "conv_bn_relu.onnx";
  if (auto s = ConvBnRelu().Save(seed_path); !s) return ReportError(s.error());
  CheckOptions healthy;
  healthy.model_path = seed_path.string();
  healthy.target.opt_level = OptLevel::kAll;
  healthy.latency_runs = o.runs;
  auto seed_report = CheckCase("the seed's Conv+BN+ReLU at ORT `all` against the unfused run", healthy,
                               *staged, "conv_bn_relu");
  if (!seed_report) return ReportError(seed_report.error());

  // 2. A planted fault, checked against the healthy model it derives from.
  const Model reference = ResidualCnn();
  auto planted = PlantFault(reference, kPlantedNode, kPlantedScale);
  if (!planted) return ReportError(planted.error());
  const fs::path reference_path = models / "residual_cnn.onnx";
  const fs::path planted_path = models / "residual_cnn_planted.onnx";
  if (auto s = reference.Save(reference_path); !s) return ReportError(s.error());
  if (auto s = planted->Save(planted_path); !s) return ReportError(s.error());
  CheckOptions faulty = healthy;
  faulty.model_path = planted_path.string();
  faulty.reference = Reference{.kind = Reference::Kind::kModel, .path = reference_path};
  auto planted_report = CheckCase(fmt::format("a residual CNN whose '{}' weights were scaled by {}, against the "
                                              "healthy model",
                                              kPlantedNode, kPlantedScale),
                                  faulty, *staged, "planted_fault");
  if (!planted_report) return ReportError(planted_report.error());
  if (auto s = staged->Commit(/*replace=*/true); !s) return ReportError(s.error().With("--out"));

  const bool seed_ok = seed_report->overall == Verdict::kPass;
  const bool fault_found = planted_report->overall == Verdict::kFail && ReportNames(*planted_report, kPlantedNode);
  fmt::print("\n== demo summary\n");
  fmt::print("  healthy Conv+BN+ReLU:  {} (expected PASS)\n", CheckVerdictName(seed_report->overall));
  fmt::print("  planted fault:         {} (expected FAIL), planted node '{}' {}\n",
             CheckVerdictName(planted_report->overall), kPlantedNode,
             fault_found ? "named in the report" : "NOT named in the report");
  fmt::print("  reports in {}/\n", o.out);
  return seed_ok && fault_found ? 0 : 1;
}

}  // namespace

void RegisterDemo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "run check and locate on built-in models (one healthy, one with a planted "
                                         "fault) and write their reports");
  cmd->add_option("--out", o->out, "where to write the models and reports (default demo-report)");
  cmd->add_option("--runs", o->runs, "timed runs per config for latency (default 10)");
  cmd->callback([o] { ExitCode() = RunDemo(*o); });
}

}  // namespace parity::cli
