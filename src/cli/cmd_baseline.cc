// parity baseline MODEL --inputs FILE -o DIR: writes the unfused baseline
// directory (engine/baseline/baseline.h); parity baseline verify DIR [MODEL] re-checks it.
// Exit codes: 0 written / verified, 1 a check failed (non-determinism while
// writing; a changed, missing or differing file when verifying), 2 bad input,
// 3 runtime failure.
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/terminal_progress.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "engine/baseline/baseline.h"
#include "engine/run/environment.h"
#include "report/console/baseline_console.h"
#include "report/json/baseline_json.h"
#include "report/json/env_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct BaselineCliOptions {
  std::string model;
  std::string inputs;
  std::string output;
  std::string max_memory;
  std::vector<std::string> only;
  bool overwrite = false;
  bool no_determinism = false;
  std::string json;
  ConfigOptions config;
};

struct VerifyCliOptions {
  std::string dir;
  std::string model;
  std::string max_memory;
  std::string json;
};

// glibc raises its mmap threshold each time a large mmapped block is freed
// (up to 32 MiB), after which tensor-sized blocks come from the heap, where
// freed memory between live blocks is not returned: every batch run then
// leaves a little more resident (measured: 178-270 MiB instead of 145 MiB on
// the 16 MiB-per-tensor chain of the e2e test). A fixed 1 MiB threshold keeps
// every tensor-sized block in its own mapping, returned to the OS when freed.
void KeepLargeBlocksMapped() {
#if defined(M_MMAP_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

Result<int64_t> MemoryOption(const std::string& text) {
  if (text.empty()) return 0;
  return WithContext(ParseMemorySize(text), "--max-memory");
}

int RunBaseline(const BaselineCliOptions& o) {
  KeepLargeBlocksMapped();
  if (auto s = CheckOutputsApart({{"-o", o.output}, {"--json", o.json}}); !s) return ReportError(s.error());
  auto config = ResolveConfig(o.config, "disable");
  if (!config) return ReportError(config.error());
  auto memory = MemoryOption(o.max_memory);
  if (!memory) return ReportError(memory.error());
  BaselineOptions options{.config = *config,
                          .max_memory_bytes = *memory,
                          .only = o.only,
                          .check_determinism = !o.no_determinism,
                          .overwrite = o.overwrite};
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  auto result = [&] {
    TerminalProgress progress;  // erased before anything else is printed
    return WriteBaseline(o.model, o.inputs, o.output, options);
  }();
  if (!result) return ReportError(result.error());
  fmt::print("{}", FormatBaselineWritten(*result, o.model, o.output, config->Label()));
  PrintPeakRss();
  if (!o.json.empty()) {
    const auto j = BaselineReportToJson(*result, (std::filesystem::path(o.output) / "manifest.json").string());
    if (auto s = WriteReportJson(o.json, WithPeakRss(j)); !s) return ReportError(s.error());
  }
  return result->deterministic() ? 0 : 1;
}

int RunVerify(const VerifyCliOptions& o) {
  KeepLargeBlocksMapped();
  auto memory = MemoryOption(o.max_memory);
  if (!memory) return ReportError(memory.error());
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  auto r = VerifyBaseline(o.dir, o.model, *memory);
  if (!r) return ReportError(r.error());
  fmt::print("{}", FormatVerifySummary(*r, o.dir, o.json));
  PrintPeakRss();
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, WithPeakRss(VerifyResultToJson(*r, EnvironmentToJson(CurrentEnvironment())))); !s)
      return ReportError(s.error());
  return r->passed() ? 0 : 1;
}

}  // namespace

void RegisterBaseline(CLI::App& app) {
  auto o = std::make_shared<BaselineCliOptions>();
  auto v = std::make_shared<VerifyCliOptions>();
  auto* cmd = app.add_subcommand("baseline", "write the unfused baseline directory (every tensor, checked)");
  cmd->add_option("model", o->model, "the .onnx model");
  cmd->add_option("--inputs", o->inputs, "input tensors: .npz, .npy, .pb, or a directory of them");
  cmd->add_option("-o,--output", o->output, "the baseline directory to write");
  cmd->add_option("--max-memory", o->max_memory,
                  "peak memory budget, e.g. 512M, 2G (default: a quarter of RAM, at most 4G)");
  cmd->add_option("--only", o->only, "keep only layers of these op types or name globs (comma-separated)")
      ->delimiter(',');
  cmd->add_flag("--overwrite", o->overwrite, "replace an earlier baseline in the directory");
  cmd->add_flag("--no-determinism-check", o->no_determinism, "run once instead of twice");
  cmd->add_option("--json", o->json, "also write a JSON report");
  AddConfigOptions(cmd, &o->config, "disable");

  auto* verify = cmd->add_subcommand("verify", "re-check a baseline directory, and re-run MODEL against it");
  verify->add_option("dir", v->dir, "the baseline directory")->required();
  verify->add_option("model", v->model, "the model, to re-run and compare at the default tolerance");
  verify->add_option("--max-memory", v->max_memory, "peak memory budget for the re-run");
  verify->add_option("--json", v->json, "also write a JSON report");
  verify->callback([v] { ExitCode() = RunVerify(*v); });

  cmd->callback([o, cmd] {
    if (cmd->got_subcommand("verify")) return;
    if (o->model.empty() || o->inputs.empty() || o->output.empty()) {
      ExitCode() = ReportError(Error(ErrorCode::kInvalidArgument, "baseline: MODEL, --inputs and -o are required"));
      return;
    }
    ExitCode() = RunBaseline(*o);
  });
}

}  // namespace parity::cli
