// parity inputs MODEL -o FILE.npz: seeded typical, boundary and anomaly
// samples from the model's signature (engine/inputs/sample_gen.h says which).
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/sample_flags.h"
#include "report/sample_notes.h"
#include "core/npz.h"
#include "core/tensor_files.h"
#include "engine/inputs/sample_gen.h"
#include "onnx/model.h"

namespace parity::cli {
namespace {

struct InputsOptions {
  std::string model;
  std::string output;
  std::string kinds = "typical,boundary,anomaly";
  uint64_t seed = 0;
  SampleFlags samples;
};

Result<SampleGenOptions> ResolveSampleOptions(const InputsOptions& o) {
  SampleGenOptions gen;
  PARITY_ASSIGN_OR_RETURN(gen.kinds, ParseSampleKinds(o.kinds));
  gen.seed = o.seed;
  PARITY_RETURN_IF_ERROR(ResolveSampleFlags(o.samples, gen));
  return gen;
}

int RunInputs(const InputsOptions& o) {
  auto gen = ResolveSampleOptions(o);
  if (!gen) return ReportError(gen.error());
  if (!o.output.ends_with(".npz"))
    return ReportError(
        Error(ErrorCode::kInvalidArgument, fmt::format("-o '{}': expected a .npz file", o.output)));
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  SampleNotes notes;
  auto samples = GenerateSamples(*model, *gen, &notes);
  if (!samples) return ReportError(samples.error().With(o.model));
  if (samples->empty())
    return ReportError(
        Error(ErrorCode::kInvalidArgument,
              fmt::format("{}: no sample of kind '{}' applies to this model", o.model, o.kinds)));
  // Always SAMPLE/INPUT keys, even for one sample: the name says its kind.
  TensorSet keyed;
  for (const Sample& s : *samples)
    for (const auto& [name, tensor] : s.tensors)
      if (auto st = keyed.Add(s.name + "/" + name, tensor); !st) return ReportError(st.error());
  if (auto st = WriteNpz(o.output, keyed); !st) return ReportError(st.error());
  for (const Sample& s : *samples) {
    std::string shapes;
    for (const auto& [name, t] : s.tensors)
      shapes += fmt::format("{}{} {} {}", shapes.empty() ? "" : ", ", name, DTypeName(t.dtype()),
                            ShapeToString(t.shape()));
    fmt::print("{:<28} {:<9} {}\n", s.name, SampleKindName(SampleKindOf(s.name)), shapes);
  }
  for (const std::string& line : SampleNoteLines(notes)) fmt::print("{}\n", line);
  fmt::print("{}: {} sample(s) written to {} (seed {})\n", o.model, samples->size(), o.output, o.seed);
  return 0;
}

}  // namespace

void RegisterInputs(CLI::App& app) {
  auto o = std::make_shared<InputsOptions>();
  auto* cmd =
      app.add_subcommand("inputs", "generate seeded typical, boundary and anomaly samples for a model");
  cmd->add_option("model", o->model, "the .onnx model")->required();
  cmd->add_option("-o,--output", o->output, "where to write the samples: FILE.npz (keys SAMPLE/INPUT)")
      ->required();
  cmd->add_option("--kind", o->kinds, "kinds to generate: typical,boundary,anomaly (default all)");
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
  AddSampleFlags(cmd, &o->samples);
  cmd->callback([o] { ExitCode() = RunInputs(*o); });
}

}  // namespace parity::cli
