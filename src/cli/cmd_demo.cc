// parity demo: parity on its built-in models, with nothing to prepare.
// Builds the seed's Conv+BN+ReLU, inspects it, runs it unfused (disable) and
// fused (all) on a seeded input, and prints how far the two runs are apart.
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/npz.h"
#include "engine/model_summary.h"
#include "engine/runner.h"
#include "onnx/builtin_models.h"
#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct DemoOptions {
  std::string out = "demo-report";
};

Tensor SeededInput(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : t.mutable_view<float>()) v = normal(rng);
  return t;
}

int RunDemo(const DemoOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return ReportError(Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", o.out, ec.message())));

  const Model model = ConvBnRelu();
  const fs::path model_path = fs::path(o.out) / "conv_bn_relu.onnx";
  if (auto s = model.Save(model_path); !s) return ReportError(s.error());
  fmt::print("== the seed's Conv+BN+ReLU, written to {}\n", model_path.string());
  fmt::print("{}\n", FormatModelInfo(Inspect(model), Check(model)));

  Sample sample{"typical", {}};
  (void)sample.tensors.Add("input", SeededInput({1, 3, 224, 224}, 0));
  if (auto s = WriteNpz(fs::path(o.out) / "inputs.npz", sample.tensors); !s) return ReportError(s.error());

  TensorSet results[2];
  const OptLevel levels[2] = {OptLevel::kDisable, OptLevel::kAll};
  for (int i = 0; i < 2; ++i) {
    RunConfig config;
    config.opt_level = levels[i];
    auto session = CreateSession(model, config, model_path.string());
    if (!session) return ReportError(session.error());
    auto outputs = RunSample(*session, sample, model_path.string());
    if (!outputs) return ReportError(outputs.error());
    fmt::print("ran at {:<8} session created in {:.1f} ms\n", OptLevelName(levels[i]), session->creation_ms());
    results[i] = std::move(*outputs);
  }
  const Tensor& ref = *results[0].Find("output");
  const Tensor& test = *results[1].Find("output");
  const Tolerance tol = DefaultTolerance(ref.dtype(), false);
  auto m = ComputeMetrics(ref, test, {.atol = tol.atol, .rtol = tol.rtol});
  if (!m) return ReportError(m.error());
  fmt::print("\n'output' at all vs disable: largest difference {:.3g} at [{}] ({:.6g} vs {:.6g}), "
             "{} of {} elements outside atol {:g} + rtol {:g}*|ref|\n",
             m->max_abs, fmt::join(m->max_abs_index, ", "), m->ref_at_max, m->test_at_max, m->mismatches, m->count,
             tol.atol, tol.rtol);
  return 0;
}

}  // namespace

void RegisterDemo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "run parity on its built-in models and write a report");
  cmd->add_option("--out", o->out, "where to write the models, inputs and reports (default demo-report)");
  cmd->callback([o] { ExitCode() = RunDemo(*o); });
}

}  // namespace parity::cli
