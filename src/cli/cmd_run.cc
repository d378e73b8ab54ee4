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
#include "engine/run/runner.h"
#include "engine/run/tensor_source.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "onnx/validate.h"

namespace parity::cli {
namespace {

// ORT refusing a model the ONNX checker refuses too is the user's mistake
// (exit 2, as `check` calls it), not a runtime failure (exit 3). The checker
// runs only once ORT has failed, so a good model pays nothing for it.
Error ClassifySessionError(const Model& model, const std::string& label, const Error& error) {
  if (error.ExitCode() == 2) return error;
  // An IR version this ORT cannot load (newer than it knows) is the model's
  // fault, whatever the checker says of it.
  if (error.message().find("Unsupported model IR version") != std::string::npos)
    return Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", label, error.message()));
  std::vector<std::string> errors;
  for (const Finding& f : Check(model))
    if (f.severity == Severity::kError) errors.push_back(f.message);
  if (errors.empty()) return error;
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("{}: not a valid ONNX model: {}{}", label, errors[0],
                           errors.size() > 1 ? fmt::format(" (and {} more checker error(s))", errors.size() - 1) : ""));
}

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

  Model to_run;
  if (o.all_tensors) {
    auto observed = ObserveAllTensors(*model);
    if (!observed) return ReportError(observed.error().With(o.model));
    to_run = std::move(observed->model);
  } else {
    to_run = std::move(*model);
  }
  auto session = CreateSession(to_run, *config, o.model);
  if (!session) return ReportError(ClassifySessionError(to_run, o.model, session.error()));

  // A sample ORT refuses costs that sample, not the others: they are run and
  // written, the refused ones named, and the exit code says not all ran.
  std::vector<Sample> results;
  std::vector<std::string> refused;
  std::optional<Error> first_error;
  for (const Sample& sample : *samples) {
    auto outputs = RunSample(*session, sample, o.model);
    if (!outputs) {
      refused.push_back(sample.name);
      if (!first_error) first_error = outputs.error();
      continue;
    }
    results.push_back({sample.name, std::move(*outputs)});
  }
  if (results.empty()) return ReportError(*first_error);
  const TensorSet joined = JoinSamples(results);
  // A folder is staged and put in place whole (SaveTensors): a refusal here
  // leaves an earlier one as it was.
  if (auto s = SaveTensors(o.output, joined); !s) return ReportError(to_dir ? s.error().With("-o") : s.error());
  size_t count = 0;
  for (const auto& r : results) count += r.tensors.size();
  fmt::print("{}: {} sample(s), {} tensor(s) written to {} [{}]\n", o.model, results.size(), count, o.output,
             config->Label());
  const OrtFact ort = CurrentOrt();
  fmt::print("onnxruntime {} ({})\n", ort.version, ort.library);
  PrintPeakRss();
  if (refused.empty()) return 0;
  return ReportError(first_error->With(fmt::format(
      "{} of {} sample(s) refused and not written ('{}'); the others are in {}; the first refusal", refused.size(),
      samples->size(), fmt::join(refused, "', '"), o.output)));
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
