// parity inspect MODEL: IR version, opsets, producer, signature with symbolic
// dims, op counts, checker verdict and findings, the PyTorch module scopes the
// exporter recorded.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "engine/check/model_summary.h"
#include "engine/run/environment.h"
#include "engine/runner/runtime_probe.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "onnx/validate.h"
#include "report/console/inspect_console.h"
#include "report/json/inspect_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::string json;
};

int RunInspect(const InspectOptions& o) {
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  const ModelInfo info = Inspect(*model);
  std::vector<Finding> findings = Check(*model);
  if (auto too_new = OpsetBeyondRuntime(info)) findings.push_back(*too_new);
  auto scopes = SummarizeScopes(*model);
  fmt::print("{}\n{}", o.model, FormatModelInfo(info, findings));
  if (scopes)
    fmt::print("{}", FormatScopeSummary(*scopes));
  else
    fmt::print("node scopes   not read: {}\n", scopes.error().message());
  if (!o.json.empty()) {
    const auto j =
        InspectReportToJson(o.model, info, findings, CheckerVerdict(findings), scopes ? &*scopes : nullptr);
    if (auto s = WriteReportJson(o.json, WithPeakRss(j)); !s) return ReportError(s.error());
  }
  return 0;
}

}  // namespace

void RegisterInspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "IR version, opsets, producer, inputs/outputs, op counts, checker verdict, node scopes");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("--json", o->json, "also write the facts as JSON to FILE");
  cmd->callback([o] { ExitCode() = RunInspect(*o); });
}

}  // namespace parity::cli
