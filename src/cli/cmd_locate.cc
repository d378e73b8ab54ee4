// parity locate MODEL [--inputs FILE]: where does the target (a config, and
// optionally a derived --target-model) depart from the reference, fused node
// by fused node. Exit 0: no failing tensor; 1: a divergence; 2: bad input;
// 3: the runtime failed.
#include <cstdio>

#include "cli/command.h"
#include "cli/model_explorer_option.h"
#include "cli/sample_flags.h"
#include "cli/terminal_progress.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "engine/commands/locate_command.h"
#include "engine/locate/repro.h"
#include "report/console/torch_console.h"
#include "report/locate_report.h"
#include "report/json/torch_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct LocateCliOptions {
  std::string model;
  std::string inputs;
  std::string sample;
  std::string reference = "disable";
  std::string target_model;
  std::string target_file;  // --target: a stored config, as a repro's target.json
  std::string repro;
  std::string json;
  std::string model_explorer;
  bool no_ablation = false;
  bool no_drilldown = false;
  bool allow_symlinks = false;
  bool reference_given = false;  // --reference on the command line (else: the target's config on two runtimes)
  std::string reference_ort_library, target_ort_library;
  int seed = 0;
  SampleFlags samples;
  ConfigOptions config;
  ToleranceOptions tolerance;
};

// The outcome to its writers: console, --json, --model-explorer.
int WriteLocate(const LocateCliOptions& o, const LocateRequest& request, const LocateOutcome& out) {
  if (out.torch) {
    PrintTorchLocate(*out.torch, request.options.target.Label(), stdout);
    if (!out.repro_not_written.empty())
      std::fprintf(stderr, "parity: --repro %s not written: %s\n", o.repro.c_str(), out.repro_not_written.c_str());
    if (!o.json.empty())
      if (auto s = WriteReportJson(o.json, WithPeakRss(TorchLocateResultToJson(*out.torch, request.reference.path.string(),
                                                                                request.options)));
          !s)
        return ReportError(s.error());
    const ModelExplorerInput overlays{.model = o.model,
                                      .locate = out.torch->fusion ? &*out.torch->fusion : nullptr,
                                      .torch = &out.torch->exported};
    if (auto s = WriteModelExplorerOption(o.model_explorer, overlays); !s) return ReportError(s.error());
    return out.passed() ? 0 : 1;
  }
  PrintLocateSummary(*out.report, stdout);
  PrintPeakRss();
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, WithPeakRss(LocateReportToJson(*out.report))); !s) return ReportError(s.error());
  if (!out.across_runtimes)
    if (auto s = WriteModelExplorerOption(o.model_explorer, {.model = o.model, .locate = &*out.report}); !s)
      return ReportError(s.error());
  return out.passed() ? 0 : 1;
}

int RunLocate(const LocateCliOptions& o) {
  // The outputs are checked before anything runs (docs/security.md).
  if (auto s = CheckOutputsApart({{"--repro", o.repro}, {"--json", o.json}, {"--model-explorer", o.model_explorer}}); !s)
    return ReportError(s.error());
  if (!o.repro.empty())
    if (auto s = CheckReproDir(o.repro); !s) return ReportError(s.error());
  ConfigOptions config = o.config;
  if (!o.target_file.empty()) {
    config.config_file = o.target_file;
    config.origin = ConfigOrigin::kStored;
  }
  auto target = ResolveConfig(config, "all");
  if (!target) return ReportError(target.error());
  auto reference = ParseReference(o.reference);
  if (!reference) return ReportError(reference.error());
  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  LocateRequest r{.model = o.model, .target_model = o.target_model, .reference = *reference,
                  .reference_given = o.reference_given, .reference_ort_library = o.reference_ort_library,
                  .target_ort_library = o.target_ort_library, .allow_symlinks = o.allow_symlinks};
  r.options.target = *target;
  r.options.reference = reference->config;
  r.options.policy = *policy;
  r.options.model_label = o.model;
  r.options.target_label = o.target_model;
  r.options.ablation = !o.no_ablation;
  r.options.drilldown = !o.no_drilldown;
  r.options.repro_dir = o.repro;
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  if (auto s = CheckOutputPath(o.repro, "--repro", /*directory=*/true); !s) return ReportError(s.error());
  if (auto s = CheckModelExplorerOption(o.model_explorer); !s) return ReportError(s.error());
  r.sample = {.inputs = o.inputs, .sample = o.sample, .model_label = o.model, .seed = o.seed,
              .gen = ResolvedSampleFlags(o.samples)};
  auto outcome = [&] {
    TerminalProgress progress;  // the engine's; erased before anything else is printed
    return LocateAny(r, PrintNote);
  }();
  if (!outcome) return ReportError(outcome.error());
  return WriteLocate(o, r, *outcome);
}

}  // namespace

void RegisterLocate(CLI::App& app) {
  auto o = std::make_shared<LocateCliOptions>();
  auto* cmd = app.add_subcommand("locate", "find the fused node where the target departs from the reference");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("--inputs", o->inputs, "input tensors (.npz, .npy, .pb or a directory); default: seeded random");
  cmd->add_option("--sample", o->sample, "which sample of --inputs (default: the first)");
  cmd->add_option("--seed", o->seed, "seed of the generated sample when --inputs is not given");
  AddSampleFlags(cmd, &o->samples);
  auto* reference = cmd->add_option("--reference", o->reference, "what the target is judged against: disable (default), a level, CONFIG.json, or torch:DIR (a PyTorch dump)");
  cmd->add_option("--reference-ort-library", o->reference_ort_library,
                  "run the reference on this libonnxruntime (in a child process), at the target's config unless "
                  "--reference is given: two ORT releases compared node by node");
  cmd->add_option("--target-ort-library", o->target_ort_library,
                  "run the target on this libonnxruntime (in a child process when it is not the process's)");
  cmd->add_option("--target", o->target_file,
                  "the target config as a JSON file (as --config, but it may not name files to write)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--target-model", o->target_model, "a model derived from MODEL that shares its tensor names");
  cmd->add_option("--repro", o->repro, "write the top culprit's minimal reproduction to this directory");
  cmd->add_option("--json", o->json, "write the parity.locate/1 report here");
  cmd->add_flag("--allow-symlinks", o->allow_symlinks, "follow symlinks inside the PyTorch dump directory (refused by default: docs/security.md)");
  cmd->add_flag("--no-ablation", o->no_ablation, "do not switch optimizers off one by one to find the optimizer that made each culprit");
  cmd->add_flag("--no-drilldown", o->no_drilldown,
                "do not narrow a culprit region that covers several fused groups by running sub-regions");
  AddModelExplorerOption(cmd, &o->model_explorer);
  AddConfigOptions(cmd, &o->config, "all");
  AddToleranceOptions(cmd, &o->tolerance);
  cmd->callback([o, reference] {
    o->reference_given = reference->count() > 0;
    ExitCode() = RunLocate(*o);
  });
}

}  // namespace parity::cli
