// parity locate MODEL [--inputs FILE]: where does the target (a config, and
// optionally a derived --target-model) depart from the reference, fused node
// by fused node. Exit 0: no failing tensor; 1: a divergence; 2: bad input;
// 3: the runtime failed.
#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"
#include "cli/model_explorer_option.h"
#include "cli/sample_flags.h"
#include "cli/terminal_progress.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "engine/inputs/input_check.h"
#include "engine/inputs/sample_gen.h"
#include "engine/load/reference.h"
#include "engine/load/samples.h"
#include "engine/locate/locate.h"
#include "engine/locate/repro.h"
#include "engine/locate/runtime_diff.h"
#include "engine/run/tensor_source.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/locate_torch.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
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

Result<Sample> PickSample(const LocateCliOptions& o, const Model& model) {
  if (o.inputs.empty()) {
    std::fprintf(stderr, "parity: no --inputs: using the generated typical sample (seed %d; docs/inputs.md)\n",
                 o.seed);
    SampleGenOptions gen;
    gen.seed = static_cast<uint64_t>(o.seed);
    PARITY_RETURN_IF_ERROR(ResolveSampleFlags(o.samples, gen));
    return WithContext(GenerateTypicalSample(model, gen), o.model);
  }
  // The same loader as every other command (engine/load/samples.h).
  PARITY_ASSIGN_OR_RETURN(auto samples,
                          LoadSamplesFor(model, o.inputs, {.model_label = o.model, .sample = o.sample}));
  if (samples.size() > 1)
    std::fprintf(stderr, "parity: %zu samples in %s; locating with the first, '%s' (choose with --sample)\n",
                 samples.size(), o.inputs.c_str(), samples.front().name.c_str());
  return std::move(samples.front());
}

// --reference torch:DIR: the export against PyTorch layer by layer, then
// the deployed config's outputs; a fusion problem is localized as usual.
int RunLocateTorch(const LocateCliOptions& o, const Reference& reference, const Model& model, const Model* derived,
                   const LocateOptions& options) {
  std::string note;
  auto dump = LoadFittingDump(reference.path, Inspect(model), o.model, o.allow_symlinks, {o.model}, &note);
  if (!dump) return ReportError(dump.error());
  if (!note.empty()) std::fprintf(stderr, "parity: note: %s\n", note.c_str());
  auto result = LocateAgainstTorch(model, derived, *dump, options);
  if (!result) return ReportError(result.error());
  const auto& e = result->exported;
  if (auto s = CheckSomeLayerAligned(*dump, e.layers.size() - e.Count(AlignHow::kNone), o.model); !s)
    return ReportError(s.error());
  fmt::print("export vs PyTorch ({})\n", e.AlignmentLine());
  fmt::print("  {}\n", e.VerdictLine());
  fmt::print("deployed [{}] outputs vs PyTorch: {}\n", options.target.Label(),
             result->deployed.passed() ? "pass" : "FAIL");
  for (const auto& t : result->deployed.tensors)
    if (t.status == Verdict::kFail) fmt::print("  '{}': {}\n", t.name, t.reason);
  if (result->fusion) {
    fmt::print("the export agrees with PyTorch but the deployed config does not: localizing the fusion\n");
    PrintLocateSummary(*result->fusion, stdout);
  } else if (!o.repro.empty()) {
    // A repro isolates a fused culprit; without one there is nothing to cut out.
    std::fprintf(stderr, "parity: --repro %s not written: %s\n", o.repro.c_str(),
                 result->passed() ? "nothing diverges"
                                  : "the export itself departs from PyTorch (see the first divergent layer), not a "
                                    "fusion of the deployed config");
  }
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, WithPeakRss(TorchLocateResultToJson(*result, reference.path.string(), options))); !s)
      return ReportError(s.error());
  const ModelExplorerInput overlays{.model = o.model,
                                    .locate = result->fusion ? &*result->fusion : nullptr,
                                    .torch = &result->exported};
  if (auto s = WriteModelExplorerOption(o.model_explorer, overlays); !s) return ReportError(s.error());
  return result->passed() ? 0 : 1;
}

// Two runtime libraries at one config (docs/locate.md, "Two runtimes").
int RunLocateRuntimes(const LocateCliOptions& o, const LocateOptions& options, const Model& model) {
  if (!o.target_model.empty())
    return ReportError(InvalidArgument("--target-model: two runtimes compare one model; drop --target-model or the "
                                       "--reference-ort-library/--target-ort-library flags").error());
  RuntimeLocateOptions ro{.reference = o.reference_given ? options.reference : options.target,
                          .target = options.target, .policy = options.policy, .model_label = o.model,
                          .repro_dir = options.repro_dir};
  if (!o.reference_ort_library.empty()) ro.reference.ort_library = o.reference_ort_library;
  if (!o.target_ort_library.empty()) ro.target.ort_library = o.target_ort_library;
  auto sample = PickSample(o, model);
  if (!sample) return ReportError(sample.error());
  auto report = LocateAcrossRuntimes(model, *sample, ro);
  if (!report) return ReportError(report.error());
  PrintLocateSummary(*report, stdout);
  PrintPeakRss();
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, WithPeakRss(LocateReportToJson(*report))); !s) return ReportError(s.error());
  return report->diverged() ? 1 : 0;
}

int RunLocate(const LocateCliOptions& o) {
  LocateOptions options;
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
  options.target = *target;
  auto reference = ParseReference(o.reference);
  if (!reference) return ReportError(reference.error());
  options.reference = reference->config;
  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  options.policy = *policy;
  options.model_label = o.model;
  options.target_label = o.target_model;
  options.ablation = !o.no_ablation;
  options.drilldown = !o.no_drilldown;
  options.repro_dir = o.repro;
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  if (auto s = CheckOutputPath(o.repro, "--repro", /*directory=*/true); !s) return ReportError(s.error());
  if (auto s = CheckModelExplorerOption(o.model_explorer); !s) return ReportError(s.error());

  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  std::optional<Model> derived;
  if (!o.target_model.empty()) {
    auto m = Model::Load(o.target_model);
    if (!m) return ReportError(m.error());
    derived = std::move(*m);
  }
  const bool two_runtimes = !o.reference_ort_library.empty() || !o.target_ort_library.empty();
  if (two_runtimes && reference->torch_dump() != nullptr)
    return ReportError(InvalidArgument("--reference torch:DIR runs no ONNX Runtime to compare with "
                                       "--reference-ort-library").error());
  if (two_runtimes) return RunLocateRuntimes(o, options, *model);
  if (reference->torch_dump() != nullptr) return RunLocateTorch(o, *reference, *model, derived ? &*derived : nullptr, options);
  auto sample = PickSample(o, *model);
  if (!sample) return ReportError(sample.error());
  auto report = [&] {
    TerminalProgress progress;  // the drill-down's; erased before anything else is printed
    return Locate(*model, derived ? &*derived : nullptr, *sample, options);
  }();
  if (!report) return ReportError(report.error());
  PrintLocateSummary(*report, stdout);
  PrintPeakRss();
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, WithPeakRss(LocateReportToJson(*report))); !s) return ReportError(s.error());
  if (auto s = WriteModelExplorerOption(o.model_explorer, {.model = o.model, .locate = &*report}); !s)
    return ReportError(s.error());
  return report->diverged() ? 1 : 0;
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
