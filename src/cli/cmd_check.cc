// parity check MODEL: the whole validation — syntax, signature, numerics,
// runtime, robustness — with a verdict, an exit code and reports for people
// (HTML, terminal) and CI (JSON, JUnit).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "core/progress.h"
#include "cli/corpus_cli.h"
#include "cli/dataset_cli.h"
#include "cli/model_explorer_option.h"
#include "cli/output.h"
#include "cli/sample_flags.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "engine/check/check.h"
#include "report/console/check_console.h"
#include "report/json/check_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

// 0 PASS, 1 FAIL, 4 NOT JUDGED: the check ran but what it judged cannot
// support a PASS (docs/errors.md).
int CheckExitCode(const CheckReport& r) {
  if (r.overall == Verdict::kFail) return 1;
  return r.overall == Verdict::kPass ? 0 : 4;
}

struct CheckCmdOptions {
  std::string model;
  std::vector<std::string> torch;
  std::string inputs;
  std::string encoder;
  std::string cache_form = "auto";
  std::string reference_model;
  std::string reference_config;
  std::string report_dir;
  std::string json;
  std::string model_explorer;
  uint32_t seed = 0;
  SampleFlags samples;
  double sample_timeout = -1;  // < 0: the default (CheckOptions::sample_timeout_s)
  double sample_memory_mib = -1;  // < 0: the default (CheckOptions::sample_memory_bytes)
  int runs = 20;
  int warmup = 3;
  double latency_seconds = 2.0;
  bool time_reference = false;
  double curve_seconds = 1.0;
  std::string reference_ort_library, target_ort_library;
  bool no_locate = false;
  bool strict = false;
  bool allow_symlinks = false;
  ConfigOptions target;
  ToleranceOptions tolerance;
  DatasetCmdOptions dataset;
  CorpusCmdOptions corpus;
};

// --dataset: the same reference and target, streamed over a dataset
// (cli/cmd_check_dataset.cc); the PyTorch dump and --inputs are one-sample
// references and are refused with it.
int RunCheckDataset(const CheckCmdOptions& o, const CheckOptions& options) {
  if (!o.torch.empty() || !o.inputs.empty())
    return ReportError(Error(ErrorCode::kInvalidArgument,
                             "check --dataset: --torch and --inputs judge single samples; give the dataset alone"));
  DatasetOptions d{.model_path = options.model_path, .reference = options.reference, .target = options.target,
                   .policy = options.policy, .allow_symlinks = o.allow_symlinks};
  return RunDatasetCheck(o.dataset, std::move(d), o.report_dir, o.json, o.model_explorer);
}

// --model-explorer DIR (cli/model_explorer_option.h), before the HTML report
// that links its files.
Status WriteCheckOverlays(const CheckCmdOptions& o, CheckReport& report) {
  const ModelExplorerInput overlays{.model = o.model,
                                    .locate = report.locate ? &*report.locate : nullptr,
                                    .layer_curve = &report.layer_curve,
                                    .torch = report.alignment ? &*report.alignment : nullptr,
                                    .quant = report.quant ? &*report.quant : nullptr};
  return WriteModelExplorerOption(o.model_explorer, overlays, &report.model_explorer, o.report_dir);
}

// The target's and the reference's configs, the reference model and the
// PyTorch dumps, from the flags.
Status ResolveCheckConfigs(const CheckCmdOptions& o, CheckOptions& options) {
  // Two ORT releases (docs/locate.md "Two runtimes"): the target's is the
  // process's (--target-ort-library is --ort-library here), the reference
  // runs on its own in a child process, at the target's config unless
  // --reference-config says otherwise.
  ConfigOptions target_options = o.target;
  if (!o.target_ort_library.empty()) {
    if (!target_options.ort_library.empty() && target_options.ort_library != o.target_ort_library)
      return InvalidArgument("--target-ort-library and --ort-library name two libraries; give one");
    target_options.ort_library = o.target_ort_library;
  }
  PARITY_ASSIGN_OR_RETURN(options.target, ResolveConfig(target_options, "all"));
  if (!o.reference_config.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.reference.config, ConfigFromLevelOrFile(o.reference_config, "--reference-config"));
  } else if (!o.reference_ort_library.empty()) {
    options.reference.config = options.target;
  }
  if (!o.reference_ort_library.empty()) {
    options.reference.config.ort_library = o.reference_ort_library;
  }
  if (!o.reference_model.empty()) {
    options.reference.kind = Reference::Kind::kModel;
    options.reference.path = o.reference_model;
  }
  // The export is judged against PyTorch under the same reference config.
  // --torch again: more dumps of the same model, their samples judged too.
  if (!o.torch.empty()) {
    options.torch =
        Reference{.kind = Reference::Kind::kTorchDump, .config = options.reference.config, .path = o.torch.front()};
    for (auto it = o.torch.begin() + 1; it != o.torch.end(); ++it)
      options.more_torch.push_back({.kind = Reference::Kind::kTorchDump, .config = options.reference.config, .path = *it});
  }
  return {};
}

int RunCheckCommand(const CheckCmdOptions& o) {
  CheckOptions options;
  options.model_path = o.model;
  options.allow_symlinks = o.allow_symlinks;
  options.inputs_path = o.inputs;
  options.encoder_path = o.encoder;
  auto cache_form = ParseCacheForm(o.cache_form);
  if (!cache_form) return ReportError(cache_form.error());
  options.cache_form = *cache_form;
  if (!o.encoder.empty() && o.torch.empty())
    return ReportError(Error(ErrorCode::kInvalidArgument, "--encoder needs --torch DUMP (a dump made with --generate)"));
  if (!o.encoder.empty() && !std::filesystem::is_regular_file(o.encoder))
    return ReportError(Error(ErrorCode::kNotFound, fmt::format("--encoder {}: no such model file", o.encoder)));
  options.seed = o.seed;
  if (auto st = ResolveSampleFlags(o.samples, options.generate); !st) return ReportError(st.error());
  options.sample_timeout_s = o.sample_timeout;
  options.sample_memory_bytes =
      o.sample_memory_mib < 0 ? -1 : static_cast<int64_t>(std::min(o.sample_memory_mib, 1e12) * 1024 * 1024);
  options.latency_runs = o.runs;
  options.latency_warmup = o.warmup;
  options.latency_seconds = o.latency_seconds;
  options.time_reference = o.time_reference;
  options.curve_seconds = o.curve_seconds;
  options.locate_on_failure = !o.no_locate;
  options.strict = o.strict;
  // The outputs are checked before anything runs (docs/security.md).
  if (auto s = CheckOutputsApart({{"--report", o.report_dir}, {"--json", o.json}, {"--model-explorer", o.model_explorer}});
      !s)
    return ReportError(s.error());
  if (!o.report_dir.empty())
    if (auto s = CheckReportDir(o.report_dir); !s) return ReportError(s.error());
  if (auto s = ResolveCheckConfigs(o, options); !s) return ReportError(s.error());
  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  options.policy = *policy;
  if (auto s = CheckOutputPath(o.report_dir, "--report", /*directory=*/true); !s) return ReportError(s.error());
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  if (auto s = CheckModelExplorerOption(o.model_explorer); !s) return ReportError(s.error());
  if (o.corpus.Given()) {  // a prompt corpus, teacher-forced (cli/corpus_cli.h)
    if (!o.torch.empty() || !o.dataset.source.empty() || !o.inputs.empty())
      return ReportError(InvalidArgument("--corpus and --prompts judge a prompt corpus: give neither --torch, "
                                         "--dataset nor --inputs with them").error());
    return RunCorpusCheck(o.corpus, o.dataset, o.model, options.target, o.report_dir, o.json);
  }
  if (std::filesystem::is_regular_file(std::filesystem::path(o.model) / "genai_config.json"))
    return ReportError(InvalidArgument(fmt::format("{}: an ORT GenAI package is checked over prompts: give --prompts "
                                                   "FILE --torch-model FACTORY, or --corpus DIR", o.model)).error());
  if (!o.dataset.source.empty()) return RunCheckDataset(o, options);
  if (o.dataset.engine != "local" || !o.dataset.ray_address.empty() || !o.dataset.reference_outputs.empty())
    return ReportError(
        Error(ErrorCode::kInvalidArgument, "--engine, --ray-address and --reference-outputs need --dataset SRC"));
  // One bar per stage's own steps; stderr only, and only on a terminal.
  ProgressBar progress(100);
  options.progress = [&progress](const std::string& stage, int done, int total) {
    progress.Update(total > 0 ? static_cast<size_t>(done * 100 / total) : 0,
                    fmt::format("{} {}/{}", stage, done, total));
  };

  // The engine's deeper work (locate's drill-down, core/progress.h) on the same bar.
  ProgressSink previous = SetProgressSink([&progress](std::string_view what, size_t done, size_t total) {
    progress.Update(total > 0 ? done * 100 / total : 0, fmt::format("{} {}/{}", what, done, total));
  });
  auto report = RunCheck(options);
  SetProgressSink(std::move(previous));
  progress.Finish();
  if (!report) return ReportError(report.error());
  PrintCheckSummary(*report, stdout);
  PrintPeakRss();
  if (auto s = WriteCheckOverlays(o, *report); !s) return ReportError(s.error());
  if (!o.report_dir.empty()) {
    if (auto s = WriteCheckReport(*report, o.report_dir); !s) return ReportError(s.error());
    const std::filesystem::path dir(o.report_dir);
    fmt::print("reports: {}, {}, {}\n", (dir / "report.html").string(), (dir / "report.json").string(),
               (dir / "junit.xml").string());
  }
  if (!o.json.empty()) {
    if (auto s = WriteReportJson(o.json, WithPeakRss(CheckReportToJson(*report))); !s) return ReportError(s.error());
  }
  return CheckExitCode(*report);
}

}  // namespace

void RegisterCheck(CLI::App& app) {
  auto o = std::make_shared<CheckCmdOptions>();
  auto* cmd = app.add_subcommand(
      "check", "the whole validation: syntax, signature, numerics, runtime, robustness; reports for CI and people");
  cmd->add_option("model", o->model,
                  "the exported .onnx model; with --corpus or --prompts, also an ORT GenAI package's folder "
                  "(genai_config.json; docs/generation.md)")->required();
  cmd->add_option("--torch", o->torch,
                  "a PyTorch dump directory (python -m parity.torch dump ...); its fp64 outputs calibrate the "
                  "tolerance of the outputs against PyTorch; give it again for more dumps (every sample of "
                  "each is judged)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--encoder", o->encoder,
                  "the encoder .onnx of an encoder-decoder whose decode step is MODEL; its outputs feed the steps "
                  "of the --torch dump's generation (docs/generation.md)");
  cmd->add_option("--cache-form", o->cache_form,
                  "how the generation stage serves the step's KV caches: fresh (new ORT buffers each step), bound "
                  "(IO binding, present buffers pre-allocated), shared (IO binding, past and present one buffer of "
                  "the maximum length, written in place), auto (shared when past and present are declared alike "
                  "with a static length, else fresh; docs/generation.md)")
      ->default_val("auto");
  cmd->add_option("--inputs", o->inputs, "samples to use (.npz with SAMPLE/INPUT keys, ...); default: generated");
  cmd->add_option("--reference-model", o->reference_model,
                  "the model MODEL was derived from (fp16, simplified, quantized): the reference runs it");
  cmd->add_option("--reference-config", o->reference_config,
                  "the reference run's config: a level (disable, basic, extended, all) or CONFIG.json (default: disable)");
  cmd->add_option("--seed", o->seed, "seed for generated samples");
  AddSampleFlags(cmd, &o->samples);
  cmd->add_option("--sample-timeout", o->sample_timeout,
                  "seconds one run of a sample may take before it is stopped and reported TIMEOUT (0: no limit; "
                  "default: max(10, 50 x the typical sample's run))")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sample-memory", o->sample_memory_mib,
                  "MiB one run of a sample may add to the process's memory before it is stopped and reported OVER "
                  "MEMORY, the check going on (0: no limit; default: half of the memory parity may use)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--runs", o->runs, "timed runs per config for latency (default 20)")->check(Positive());
  cmd->add_option("--warmup", o->warmup, "untimed warm-up runs (default 3)")->check(NonNegative());
  cmd->add_option("--latency-seconds", o->latency_seconds,
                  "time budget of each config's warm-up and timed runs (default 2; --runs and --warmup are caps)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--time-reference", o->time_reference,
                "time the reference config's latency as the target's (default: a reference whose --runs do not fit "
                "--latency-seconds is timed by its determinism re-run alone)");
  cmd->add_option("--curve-seconds", o->curve_seconds,
                  "a passing check computes its per-layer error curve when its extra sessions are estimated at most "
                  "this many seconds (default 1; 0: never; a failing check always localizes)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--reference-ort-library", o->reference_ort_library,
                  "run the reference on this libonnxruntime (in a child process), at the target's config unless "
                  "--reference-config is given: two ORT releases compared, a failure localized node by node");
  cmd->add_option("--target-ort-library", o->target_ort_library,
                  "run the target on this libonnxruntime (the process's runtime: as --ort-library)");
  cmd->add_flag("--no-locate", o->no_locate, "do not localize a numeric failure");
  cmd->add_flag("--strict", o->strict,
                "fail on warnings too (true findings that do not change the numbers, e.g. declared shapes that "
                "contradict what the model computes): exit 1");
  cmd->add_flag("--allow-symlinks", o->allow_symlinks, "follow symlinks inside the PyTorch dump directory or the dataset (refused by default: docs/security.md)");
  cmd->add_option("--report", o->report_dir, "write report.json, report.html and junit.xml into DIR");
  cmd->add_option("--json", o->json, "also write the JSON report to FILE");
  AddModelExplorerOption(cmd, &o->model_explorer);
  AddConfigOptions(cmd, &o->target, "all");
  AddToleranceOptions(cmd, &o->tolerance);
  AddDatasetOptions(cmd, &o->dataset);
  AddCorpusOptions(cmd, &o->corpus);
  cmd->callback([o] { ExitCode() = RunCheckCommand(*o); });
}

}  // namespace parity::cli
