// parity bench MODEL: latency and memory per config, and with --fusions the
// speed each fusion buys next to the precision it costs (engine/bench.h).
#include <fmt/format.h>

#include <filesystem>

#include "cli/command.h"
#include "cli/output.h"
#include "engine/inputs/input_check.h"
#include "engine/bench/bench.h"
#include "engine/inputs/sample_gen.h"
#include "engine/run/tensor_source.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "report/bench_report.h"
#include "report/json_out.h"

namespace parity::cli {
namespace {

struct BenchCliOptions {
  std::string model;
  std::string configs = "disable,all";
  std::vector<std::string> config_files;
  std::string inputs;
  std::string sample;
  uint64_t seed = 0;
  int runs = 20;
  int warmup = 3;
  double max_seconds = 10;
  bool fusions = false;
  std::string json;
};

std::string Mib(int64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20)); }

std::string Err(double v) { return v < 0 ? "-" : fmt::format("{:.3g}", v); }

void PrintConfigs(const BenchReport& r) {
  fmt::print("{}: sample '{}' ({}), {} timed run(s) after {} warm-up\n", r.model, r.sample, r.input_summary,
             r.runs, r.warmup);
  fmt::print("{:<28} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>12}\n", "config", "create ms", "mean ms",
             "p50 ms", "p95 ms", "p99 ms", "peak MiB", "session MiB",
             r.reference.empty() ? "max_abs" : "max_abs vs " + r.reference);
  for (const auto& c : r.configs) {
    if (!c.error.empty()) {
      fmt::print("{:<28} failed: {}\n", c.label, c.error);
      continue;
    }
    const auto& l = c.latency;
    fmt::print("{:<28} {:>10.1f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>10} {:>11} {:>12}{}\n", c.label,
               c.session_creation_ms, l.mean_ms, l.p50_ms, l.p95_ms, l.p99_ms, Mib(c.peak_rss_bytes),
               Mib(c.session_rss_bytes), Err(c.max_abs_vs_reference),
               c.nonfinite_mismatch ? " (nan/inf differ)" : "");
  }
}

void PrintFusions(const BenchReport& r) {
  if (!r.fusions_requested) return;
  if (r.fusions.empty()) {
    fmt::print("\nfusions: ORT reported no optimizer changing the graph at '{}'\n", r.fused_config);
    return;
  }
  fmt::print(
      "\nfusions switched off one at a time from '{}' (buys: p50 without - p50 with; costs: error with - "
      "error without)\n",
      r.fused_config);
  fmt::print("{:<36} {:>14} {:>12} {:>16} {:>12}  {}\n", "optimizer", "p50 without ms", "buys ms",
             "max_abs without", "costs", "note");
  for (const auto& f : r.fusions) {
    if (!f.without.error.empty()) {
      fmt::print("{:<36} failed: {}\n", f.optimizer, f.without.error);
      continue;
    }
    fmt::print("{:<36} {:>14.3f} {:>12.3f} {:>16} {:>12}  {}\n", f.optimizer, f.without.latency.p50_ms,
               f.speed_ms, Err(f.without.max_abs_vs_reference), fmt::format("{:.3g}", f.precision_cost),
               f.switched_off ? "" : "ORT still applied it (cannot be switched off by this name)");
  }
}

Result<Sample> PickSample(const BenchCliOptions& o, const Model& model) {
  if (!o.inputs.empty()) {
    const ModelInfo info = Inspect(model);
    TensorSourceOptions source;
    for (const auto& v : info.inputs) source.input_names.push_back(v.name);
    PARITY_ASSIGN_OR_RETURN(auto samples, LoadSamples(o.inputs, source));
    if (samples.empty()) return InvalidArgument(fmt::format("{}: no tensors", o.inputs));
    PARITY_RETURN_IF_ERROR(CheckInputs(samples, info.inputs, o.inputs, o.model));
    for (auto& s : samples)
      if (o.sample.empty() || s.name == o.sample) return std::move(s);
    return NotFound(fmt::format("{}: no sample '{}'", o.inputs, o.sample));
  }
  SampleGenOptions gen;
  gen.kinds = {GeneratedKind::kTypical};
  gen.seed = o.seed;
  PARITY_ASSIGN_OR_RETURN(auto samples, WithContext(GenerateSamples(model, gen), o.model));
  if (samples.empty()) return InternalError("no typical sample generated");
  return std::move(samples.front());
}

int RunBenchCommand(const BenchCliOptions& o) {
  BenchOptions options;
  if (o.runs < 1 || o.warmup < 0 || !(o.max_seconds > 0))
    return ReportError(
        Error(ErrorCode::kInvalidArgument, "--runs must be >= 1, --warmup >= 0, --max-seconds > 0"));
  options.latency = {.warmup = o.warmup, .runs = o.runs, .max_seconds = o.max_seconds};
  options.fusions = o.fusions;
  if (!o.configs.empty()) {
    auto levels = ConfigsFromLevels(o.configs);
    if (!levels) return ReportError(levels.error());
    options.configs = std::move(*levels);
  }
  for (const auto& file : o.config_files) {
    auto config = LoadRunConfig(file);
    if (!config) return ReportError(config.error());
    options.configs.push_back(
        {fmt::format("{} ({})", std::filesystem::path(file).stem().string(), config->Label()), *config});
  }
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  auto sample = PickSample(o, *model);
  if (!sample) return ReportError(sample.error());
  auto report = RunBench(*model, o.model, *sample, options);
  if (!report) return ReportError(report.error());
  PrintConfigs(*report);
  PrintFusions(*report);
  if (!o.json.empty()) {
    if (auto s = WriteJsonFile(o.json, BenchReportToJson(*report)); !s)
      return ReportError(s.error());
  }
  for (const auto& c : report->configs)
    if (!c.error.empty()) {
      std::fprintf(stderr, "parity: error: config '%s' failed (see the table above)\n", c.label.c_str());
      return 3;
    }
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
  cmd->add_option("--inputs", o->inputs, "input tensors (default: a generated typical sample)");
  cmd->add_option("--sample", o->sample, "which sample of --inputs (default: the first)");
  cmd->add_option("--seed", o->seed, "seed of the generated sample (default 0)");
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
