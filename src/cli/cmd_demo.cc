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
#include "engine/commands/demo_command.h"
#include "report/console/check_console.h"
#include "report/report_writer.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct DemoOptions {
  std::string out = "demo-report";
  int runs = 10;
};

// Runs one case's check and writes its reports into its folder under the
// staging folder; returns the report.
Result<CheckReport> CheckCase(const DemoCase& c, const StagedDir& staged) {
  fmt::print("\n== {}\n", c.title);
  PARITY_ASSIGN_OR_RETURN(CheckReport report, CheckStaged(c.options, staged));
  PrintCheckSummary(report, stdout);
  PARITY_RETURN_IF_ERROR(WriteCheckReport(report, staged.path() / c.name));
  fmt::print("report: {}\n", (staged.target() / c.name / "report.html").string());
  return report;
}

int RunDemo(const DemoOptions& o) {
  const fs::path out(o.out);
  // Only a new, empty or earlier demo folder is replaced (docs/security.md),
  // and only whole: everything goes to a staging folder beside it first.
  auto staged = StageOutputDir(out, "parity.demo", DemoFiles());
  if (!staged) return ReportError(staged.error().With("--out"));
  const fs::path models = staged->path() / "models";
  std::error_code ec;
  fs::create_directories(models, ec);
  if (ec) return ReportError(Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", o.out, ec.message())));

  auto healthy = HealthyDemoCase(models, o.runs);
  if (!healthy) return ReportError(healthy.error());
  auto seed_report = CheckCase(*healthy, *staged);
  if (!seed_report) return ReportError(seed_report.error());
  auto planted = PlantedDemoCase(models, healthy->options);
  if (!planted) return ReportError(planted.error());
  auto planted_report = CheckCase(*planted, *staged);
  if (!planted_report) return ReportError(planted_report.error());
  if (auto s = staged->Commit(/*replace=*/true); !s) return ReportError(s.error().With("--out"));

  const bool seed_ok = seed_report->overall == Verdict::kPass;
  const bool fault_found = PlantedFaultFound(*planted_report);
  fmt::print("\n== demo summary\n");
  fmt::print("  healthy Conv+BN+ReLU:  {} (expected PASS)\n", CheckVerdictName(seed_report->overall));
  fmt::print("  planted fault:         {} (expected FAIL), planted node '{}' {}\n",
             CheckVerdictName(planted_report->overall), kDemoPlantedNode,
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
