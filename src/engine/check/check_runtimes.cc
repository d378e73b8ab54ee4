// A check across two ONNX Runtime releases (issue 43, docs/locate.md "Two
// runtimes"): the target runs on the process's ORT, the reference on the
// library its config names, in a child `parity runner-worker`
// (engine/runner/runner.h). The reference pass runs every sample there on one
// kept session; a failure is localized node by node across both runtimes
// (LocateAcrossRuntimes), the fused plans compared.
#include <fmt/format.h>

#include "engine/check/check_internal.h"
#include "engine/locate/runtime_diff.h"
#include "engine/runner/runner.h"

namespace parity::check_internal {

std::unique_ptr<Runner> ChildReference(Context& ctx, std::vector<CheckFinding>& f) {
  const RunConfig& config = ctx.options.reference.config;
  if (config.ort_library.empty()) return nullptr;
  auto runner = MakeOrtRunner(config);
  if (!runner) {
    ctx.input_error = runner.error().With("--reference-ort-library");
    return nullptr;
  }
  if ((*runner)->ran().kind != RanWhat::Kind::kOrtChild) return nullptr;  // the process's own library
  const OrtFact& ort = (*runner)->ran().ort;
  ctx.reference.ort = ort;
  f.push_back(Pass("syntax.ort_load.reference",
                   fmt::format("onnxruntime {} ({}) runs the reference at [{}] in a child process", ort.version,
                               ort.library, config.Label())));
  return std::move(*runner);
}

void RunChildReferencePass(Context& ctx, Runner& reference) {
  ctx.reference.loaded = true;
  std::vector<std::string> names;
  for (const auto& out : ctx.subject.info.outputs) names.push_back(out.name);
  ctx.reference.results.SetOutputNames(std::move(names));
  const RunnerJob job{.model = ctx.options.model_path, .keep_session = true};
  RunReferencePass(ctx, [&](const Sample& s) { return reference.Run(job, s.tensors); }, nullptr);
}

Result<LocateReport> LocateOnTwoRuntimes(const CheckOptions& options, const Model& model,
                                         const TolerancePolicy& policy, const Sample& sample) {
  RuntimeLocateOptions o{.reference = options.reference.config,
                         .target = options.target,
                         .policy = policy,
                         .model_label = options.model_path};
  return LocateAcrossRuntimes(model, sample, o);
}

}  // namespace parity::check_internal
