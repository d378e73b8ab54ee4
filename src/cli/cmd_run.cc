// parity run MODEL --inputs FILE -o FILE.npz: runs one config on every
// sample; --all-tensors also saves every intermediate tensor.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "cli/command.h"
#include "core/input_files.h"
#include "core/output_dir.h"
#include "core/tensor_files.h"
#include "cli/output.h"
#include "cli/peak_rss.h"
#include "engine/inputs/input_check.h"
#include "engine/load/samples.h"
#include "engine/run/environment.h"
#include "engine/runner/run_samples.h"
#include "engine/run/tensor_source.h"
#include "onnx/inspect.h"
#include "onnx/model.h"

namespace parity::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string inputs;
  std::string output;
  bool all_tensors = false;
  ConfigOptions config;
};

int RunRun(const RunOptions& o) {
  auto config = ResolveConfig(o.config, "all");
  if (!config) return ReportError(config.error());
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  const bool to_dir = !o.output.ends_with(".npz");
  if (auto s = CheckOutputPath(o.output, "-o", to_dir); !s) return ReportError(s.error());
  // A folder of .npy outputs is parity's own: new, empty, or an earlier
  // run's (its marker), never a folder of the user's files (docs/security.md).
  if (to_dir)
    if (auto s = CheckOutputDir(o.output, kTensorDirKind); !s) return ReportError(s.error().With("-o"));

  // The inputs are checked against the model before any session exists: a
  // wrong name, dtype or shape is the user's mistake (exit 2), not ORT's.
  auto samples = LoadSamplesFor(*model, o.inputs, {.model_label = o.model});
  if (!samples) return ReportError(samples.error());
  // `-o x.npz` must not be the inputs' file; found now, not after the runs.
  if (!to_dir)
    if (auto s = CheckNotAnInput(o.output); !s) return ReportError(s.error().With("-o"));
  // A folder holds one NAME.npy per output: several samples (SAMPLE/NAME
  // keys) have no file names there; said now, not after the runs.
  if (to_dir && (samples->size() > 1 || (samples->size() == 1 && (*samples)[0].name != "default")))
    return ReportError(Error(ErrorCode::kInvalidArgument,
                             fmt::format("-o: {}: {} sample(s) ('{}', ...) give SAMPLE/OUTPUT names, which a folder "
                                         "of NAME.npy files cannot hold; write FILE.npz instead",
                                         o.output, samples->size(), (*samples)[0].name)));

  auto run = RunEverySample(*model, *samples, *config, o.model, o.all_tensors);
  if (!run) return ReportError(run.error());
  const std::vector<Sample>& results = run->results;
  const TensorSet joined = JoinSamples(results);
  // A folder is staged and put in place whole (SaveTensors): a refusal here
  // leaves an earlier one as it was.
  if (auto s = SaveTensors(o.output, joined); !s) return ReportError(to_dir ? s.error().With("-o") : s.error());
  size_t count = 0;
  for (const auto& r : results) count += r.tensors.size();
  fmt::print("{}: {} sample(s), {} tensor(s) written to {} [{}]\n", o.model, results.size(), count, o.output,
             config->Label());
  fmt::print("onnxruntime {} ({})\n", run->ran.ort.version, run->ran.ort.library);
  PrintPeakRss();
  if (run->refused.empty()) return 0;
  return ReportError(run->first_error->With(fmt::format(
      "{} of {} sample(s) refused and not written ('{}'); the others are in {}; the first refusal",
      run->refused.size(), samples->size(), fmt::join(run->refused, "', '"), o.output)));
}

}  // namespace

void RegisterRun(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "run one config on every sample and save the outputs");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("--inputs", o->inputs, "input tensors: .npz, .npy, .pb, or a directory of them")->required();
  cmd->add_option("-o,--output", o->output, "where to write the outputs: FILE.npz or a directory")->required();
  cmd->add_flag("--all-tensors", o->all_tensors, "also save every intermediate tensor");
  AddConfigOptions(cmd, &o->config, "all");
  cmd->callback([o] { ExitCode() = RunRun(*o); });
}

}  // namespace parity::cli
