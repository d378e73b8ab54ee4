// parity bench MODEL: latency and memory per config, and with --fusions the
// speed each fusion buys next to the precision it costs (engine/bench/bench.h).
#include <fmt/format.h>

#include <filesystem>

#include "cli/command.h"
#include "cli/sample_flags.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "engine/bench/bench.h"
#include "engine/load/pick_sample.h"
#include "onnx/model.h"
#include "report/bench_report.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct BenchCliOptions {
  std::string model;
  std::string configs = "disable,all";
  std::vector<std::string> config_files;
  std::string inputs;
  std::string sample;
  uint64_t seed = 0;
  SampleFlags samples;
  int runs = 20;
  int warmup = 3;
  double max_seconds = 10;
  bool fusions = false;
  std::string json;
  std::vector<std::string> providers;
  std::vector<std::string> provider_options;
  std::vector<std::string> ep_libraries;
  std::string ort_library;
};

// --providers with their --provider-option EP:KEY=VALUE (read only when there are providers).
Result<RunConfig> ParseProviders(const BenchCliOptions& o) {
  RunConfig overlay;
  overlay.providers = o.providers;
  if (o.providers.empty()) return overlay;
  for (const auto& spec : o.provider_options) PARITY_RETURN_IF_ERROR(AddProviderOption(spec, overlay));
  return overlay;
}

int RunBenchCommand(const BenchCliOptions& o) {
  BenchOptions options;
  if (o.runs < 1 || o.warmup < 0 || !(o.max_seconds > 0))
    return ReportError(
        Error(ErrorCode::kInvalidArgument, "--runs must be >= 1, --warmup >= 0, --max-seconds > 0"));
  options.latency = {.warmup = o.warmup, .runs = o.runs, .max_seconds = o.max_seconds};
  options.fusions = o.fusions;
  auto configs = BenchConfigSet(o.configs, ParseProviders(o));
  if (!configs) return ReportError(configs.error());
  options.configs = std::move(*configs);
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  for (const auto& file : o.config_files) {
    auto config = LoadRunConfig(file);
    if (!config) return ReportError(config.error());
    options.configs.push_back(
        {fmt::format("{} ({})", std::filesystem::path(file).stem().string(), config->Label()), *config});
  }
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  auto sample = PickSample(*model, {.inputs = o.inputs, .sample = o.sample, .model_label = o.model,
                                    .seed = static_cast<int64_t>(o.seed), .gen = ResolvedSampleFlags(o.samples)});
  if (!sample) return ReportError(sample.error());
  auto report = RunBench(*model, o.model, *sample, options);
  if (!report) return ReportError(report.error());
  PrintBenchReport(*report, stdout);
  PrintPeakRss();
  if (!o.json.empty()) {
    if (auto s = WriteReportJson(o.json, WithPeakRss(BenchReportToJson(*report))); !s)
      return ReportError(s.error());
  }
  if (auto s = BenchStatus(*report); !s) return ReportError(s.error());
  return 0;
}

}  // namespace

void RegisterBench(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  auto* cmd =
      app.add_subcommand("bench", "latency and memory per config, and what each fusion buys and costs");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("--configs", o->configs,
                  "optimization levels to measure, comma-separated: disable,basic,extended,all (default "
                  "disable,all; '' for none)");
  cmd->add_option("--config", o->config_files, "also measure a run config JSON file (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--providers", o->providers, "execution providers of the --configs levels: cpu, openvino, cuda")
      ->delimiter(',');
  cmd->add_option("--provider-option", o->provider_options, "an execution provider's option EP:KEY=VALUE");
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->add_option("--inputs", o->inputs, "input tensors (default: a generated typical sample)");
  cmd->add_option("--sample", o->sample, "which sample of --inputs (default: the first)");
  cmd->add_option("--seed", o->seed, "seed of the generated sample (default 0)");
  AddSampleFlags(cmd, &o->samples);
  cmd->add_option("--runs", o->runs, "timed runs per config (default 20)");
  cmd->add_option("--warmup", o->warmup, "untimed runs first (default 3)");
  cmd->add_option("--max-seconds", o->max_seconds,
                  "stop timing a config after this long (>= 3 runs; default 10)");
  cmd->add_flag("--fusions", o->fusions,
                "switch off each optimizer ORT applied at 'all', one at a time: its speed and its precision");
  cmd->add_option("--json", o->json, "write the parity.bench/1 report (docs/bench.md)");
  cmd->callback([o] { ExitCode() = RunBenchCommand(*o); });
}

}  // namespace parity::cli
