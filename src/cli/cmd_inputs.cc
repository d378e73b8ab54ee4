// parity inputs MODEL -o FILE.npz: seeded typical, boundary and anomaly
// samples from the model's signature (engine/inputs/sample_gen.h says which).
#include <fmt/format.h>

#include "cli/command.h"
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
  std::vector<std::string> shapes;
  std::vector<std::string> dims;
  std::vector<std::string> ranges;
  int64_t min_size = 1;
};

Result<SampleGenOptions> ResolveSampleOptions(const InputsOptions& o) {
  SampleGenOptions gen;
  PARITY_ASSIGN_OR_RETURN(gen.kinds, ParseSampleKinds(o.kinds));
  gen.seed = o.seed;
  gen.min_size = o.min_size;
  for (const auto& text : o.shapes) {
    PARITY_ASSIGN_OR_RETURN(auto shape, ParseShapeOverride(text));
    if (!gen.shapes.emplace(shape.first, shape.second).second)
      return InvalidArgument(fmt::format("--shape given twice for '{}'", shape.first));
  }
  for (const auto& text : o.dims) {
    PARITY_ASSIGN_OR_RETURN(auto dim, ParseDimOverride(text));
    gen.dims[dim.first] = dim.second;
  }
  for (const auto& text : o.ranges) {
    PARITY_ASSIGN_OR_RETURN(auto range, ParseRangeOverride(text));
    gen.ranges[range.first] = range.second;
  }
  if (o.min_size < 0) return InvalidArgument("--min-size must be >= 0");
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
  auto samples = GenerateSamples(*model, *gen);
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
  cmd->add_option(
      "--shape", o->shapes,
      "an input's shape NAME:1x3xHxW (numbers fix a dim, letters name a dynamic one); repeatable");
  cmd->add_option("--dim", o->dims, "a dynamic dim's size SYMBOL=N (e.g. batch=4); repeatable");
  cmd->add_option("--range", o->ranges,
                  "an input's typical values uniform in [LO, HI): NAME:LO,HI; repeatable");
  cmd->add_option("--min-size", o->min_size,
                  "the size boundary_min_size gives dynamic non-batch dims (default 1)");
  cmd->callback([o] { ExitCode() = RunInputs(*o); });
}

}  // namespace parity::cli
