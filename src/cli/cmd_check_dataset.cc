// parity check MODEL --dataset SRC: thousands of samples streamed through the
// reference and the target (engine/dataset/dataset.h), reported as
// parity.dataset/1 (report/dataset_report.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/dataset_cli.h"
#include "cli/model_explorer_option.h"
#include "core/json_out.h"
#include "engine/ray/dataset_ray.h"
#include "engine/ray/driver_python.h"
#include "report/console/check_console.h"
#include "report/dataset_report.h"
#include "report/report_writer.h"

namespace parity::cli {

void AddDatasetOptions(CLI::App* cmd, DatasetCmdOptions* o) {
  cmd->add_option("--dataset", o->source,
                  "judge every sample of a dataset: a folder or glob of .npz/.npy files, or a folder of per-sample "
                  "folders (docs/dataset.md)");
  cmd->add_option("--on-bad-sample", o->on_bad_sample,
                  "with --dataset: an unreadable or mismatched sample fails the run (fail, the default) or is "
                  "counted and skipped (skip)")
      ->check(CLI::IsMember({"fail", "skip"}));
  cmd->add_option("--dataset-locate", o->locate, "with --dataset: locate the K worst samples (default 3) and the flips")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--engine", o->engine, "with --dataset: local (default) or ray (a pool of Ray actors)")
      ->check(CLI::IsMember({"local", "ray"}));
  cmd->add_option("--ray-address", o->ray_address, "with --engine ray: join this cluster (default: start a local one)");
  cmd->add_option("--ray-actors", o->ray_actors, "with --engine ray: actors in the pool (default 2)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--reference-outputs", o->reference_outputs,
                  "with --dataset: the reference is stored outputs, DIR/STEM.npz per entry (keys OUTPUT or "
                  "SAMPLE/OUTPUT; what parity.check writes for a torch.nn.Module), not a run of the model");
  cmd->add_option("--ray-python", o->ray_python,
                  "with --engine ray: the Python with parity and ray (default: $PARITY_PYTHON, else python3)");
}

namespace {

// samples/s and ETA on stderr, redrawn in place; silent when stderr is no terminal.
class DatasetProgress {
 public:
  explicit DatasetProgress(size_t total) : bar_(total), start_(std::chrono::steady_clock::now()) {}
  void operator()(int64_t samples, size_t done, size_t total) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = s > 0 ? static_cast<double>(samples) / s : 0;
    const double eta = done > 0 ? s * static_cast<double>(total - done) / static_cast<double>(done) : 0;
    bar_.Update(done, fmt::format("{} samples, {:.1f} samples/s, ETA {:.0f} s", samples, rate, eta));
  }
  void Finish() { bar_.Finish(); }

 private:
  ProgressBar bar_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int RunDatasetCheck(const DatasetCmdOptions& o, DatasetOptions options, const std::string& report_dir,
                    const std::string& json, const std::string& model_explorer) {
  options.source = o.source;
  options.skip_bad = o.on_bad_sample == "skip";
  options.locate_worst = o.locate;
  options.engine = o.engine;
  options.reference_outputs = o.reference_outputs;
  if (o.engine == "ray") {
    // The driver's Python is asked before anything runs: a bad one is a
    // mistake in the command, one line, exit 2 (issue 56, class 15).
    if (auto py = CheckDriverPython(o.ray_python); !py) return ReportError(py.error());
    options.rows = RayRowSource(o.Ray(), options);
  }
  auto progress = std::make_shared<std::unique_ptr<DatasetProgress>>();
  options.progress = [progress](int64_t samples, size_t done, size_t total) {
    if (!*progress) *progress = std::make_unique<DatasetProgress>(total);
    (**progress)(samples, done, total);
  };
  auto report = RunDataset(options);
  if (*progress) (*progress)->Finish();
  if (!report) return ReportError(report.error());
  std::fputs(FormatDatasetSummary(*report).c_str(), stdout);
  std::optional<ModelExplorerLinks> links;  // for the HTML report, written after
  if (auto s = WriteModelExplorerOption(model_explorer, {.model = options.model_path, .dataset = &*report}, &links,
                                        report_dir);
      !s)
    return ReportError(s.error());
  if (!report_dir.empty()) {
    if (auto s = WriteDatasetReport(*report, report_dir, links ? &*links : nullptr); !s) return ReportError(s.error());
    const std::filesystem::path dir(report_dir);
    fmt::print("reports: {}, {}, {}\n", (dir / kReportHtmlName).string(), (dir / kReportJsonName).string(),
               (dir / kReportJUnitName).string());
  }
  if (!json.empty())
    if (auto s = WriteReportJson(json, DatasetReportToJson(*report)); !s) return ReportError(s.error());
  // No sample judged: NOT JUDGED, exit 4 (docs/errors.md), as check.
  return report->overall == Verdict::kFail ? 1 : report->overall == Verdict::kPass ? 0 : 4;
}

}  // namespace parity::cli
