// parity align MODEL --torch DIR [--json FILE]: aligns a PyTorch dump's
// layers with the model's ONNX tensors, judges each aligned pair and names
// the first divergent layer. Exit 0: no divergence; 1: a layer or output
// diverges; 2: bad input; 3: the runtime failed.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/model_explorer_option.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "core/json_out.h"
#include "engine/torch/dump_for_model.h"
#include "onnx/model.h"
#include "report/console/torch_console.h"
#include "report/json/torch_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct AlignCmdOptions {
  std::string model;
  std::string torch_dir;
  std::string json;
  std::string model_explorer;
  ToleranceOptions tolerance;
  bool all_layers = false;
  bool allow_symlinks = false;
  ConfigOptions config;
};

int RunAlign(const AlignCmdOptions& o) {
  if (auto s = CheckOutputsApart({{"--json", o.json}, {"--model-explorer", o.model_explorer}}); !s)
    return ReportError(s.error());
  auto config = ResolveConfig(o.config, "disable");
  if (!config) return ReportError(config.error());
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  auto dump = LoadDumpForModel(o.torch_dir, *model, o.model, o.allow_symlinks, PrintNote);
  if (!dump) return ReportError(dump.error());
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  if (auto s = CheckModelExplorerOption(o.model_explorer); !s) return ReportError(s.error());

  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  TorchCompareOptions options;
  options.label = o.model;
  options.policy = std::move(*policy);
  auto result = AlignWithDump(*model, *dump, *config, options);
  if (!result) return ReportError(result.error());

  fmt::print("{}{}", FormatAlignTable(*result, o.all_layers), FormatAlignSummary(*result));
  PrintPeakRss();

  if (!o.json.empty()) {
    if (auto s = WriteReportJson(o.json, WithPeakRss(AlignReportToJson(*result, *config))); !s) return ReportError(s.error());
  }
  if (auto s = WriteModelExplorerOption(o.model_explorer, {.model = o.model, .torch = &*result}); !s)
    return ReportError(s.error());
  return result->passed() ? 0 : 1;
}

}  // namespace

void RegisterAlign(CLI::App& app) {
  auto o = std::make_shared<AlignCmdOptions>();
  auto* cmd = app.add_subcommand("align",
                                 "align a PyTorch dump's layers with the model's tensors and find the "
                                 "first divergent layer");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("--torch", o->torch_dir, "PyTorch dump directory (python -m parity.torch dump)")
      ->required();
  cmd->add_option("--json", o->json, "also write the alignment as JSON (schema parity.align/1)");
  AddModelExplorerOption(cmd, &o->model_explorer);
  AddToleranceOptions(cmd, &o->tolerance);
  cmd->add_flag("--allow-symlinks", o->allow_symlinks, "follow symlinks inside the PyTorch dump directory (refused by default: docs/security.md)");
  cmd->add_flag("--all-layers", o->all_layers, "also list container modules, not only leaves");
  AddConfigOptions(cmd, &o->config, "disable");
  cmd->callback([o] { ExitCode() = RunAlign(*o); });
}

}  // namespace parity::cli
