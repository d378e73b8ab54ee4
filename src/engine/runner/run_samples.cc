#include "engine/runner/run_samples.h"

#include <fmt/format.h>

#include "engine/runner/session_run.h"
#include "onnx/validate.h"

namespace parity {
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

}  // namespace

Result<SamplesRun> RunEverySample(const Model& model, const std::vector<Sample>& samples, const RunConfig& config,
                                  const std::string& label, bool all_tensors) {
  std::optional<Model> observed;
  if (all_tensors) {
    PARITY_ASSIGN_OR_RETURN(ObservedModel o, WithContext(ObserveAllTensors(model), label));
    observed.emplace(std::move(o.model));
  }
  const Model& to_run = observed ? *observed : model;
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, MakeOrtRunner(config));
  const RunnerJob job{.model = label, .loaded = &to_run, .keep_session = true};
  if (auto ready = runner->Prepare(job); !ready)
    return std::unexpected(ClassifySessionError(to_run, label, ready.error()));
  SamplesRun run{.ran = runner->ran()};
  for (const Sample& sample : samples) {
    auto outputs = runner->Run(job, sample.tensors);
    if (!outputs) {
      run.refused.push_back(sample.name);
      if (!run.first_error) run.first_error = outputs.error().With(fmt::format("sample '{}'", sample.name));
      continue;
    }
    run.results.push_back({sample.name, std::move(*outputs)});
  }
  if (run.results.empty() && run.first_error) return std::unexpected(*run.first_error);
  return run;
}

}  // namespace parity
