#include "engine/commands/locate_command.h"

#include <utility>

#include "engine/load/reference_model.h"
#include "engine/locate/runtime_diff.h"
#include "engine/torch/dump_for_model.h"
#include "onnx/model.h"

namespace parity {
namespace {

// --reference torch:DIR: the export against PyTorch layer by layer, then
// the deployed config's outputs; a fusion problem is localized as usual.
Result<LocateOutcome> LocateTorch(const LocateRequest& r, const Model& model, const Model* derived,
                                  const NoteSink& note) {
  PARITY_ASSIGN_OR_RETURN(auto dump, LoadDumpForModel(r.reference.path, model, r.model, r.allow_symlinks, note));
  PARITY_ASSIGN_OR_RETURN(auto result, LocateAgainstTorch(model, derived, dump, r.options));
  PARITY_RETURN_IF_ERROR(CheckSomeLayerAligned(dump, result.exported, r.model));
  LocateOutcome out;
  // A repro isolates a fused culprit; without one there is nothing to cut out.
  if (!result.fusion && !r.options.repro_dir.empty())
    out.repro_not_written = result.passed() ? "nothing diverges"
                                            : "the export itself departs from PyTorch (see the first divergent "
                                              "layer), not a fusion of the deployed config";
  out.torch = std::move(result);
  return out;
}

// Two runtime libraries at one config (docs/locate.md, "Two runtimes").
Result<LocateOutcome> LocateRuntimes(const LocateRequest& r, const Model& model, const NoteSink& note) {
  if (!r.target_model.empty())
    return InvalidArgument("--target-model: two runtimes compare one model; drop --target-model or the "
                           "--reference-ort-library/--target-ort-library flags");
  const LocateOptions& o = r.options;
  RuntimeLocateOptions ro{.reference = r.reference_given ? o.reference : o.target, .target = o.target,
                          .policy = o.policy, .model_label = r.model, .repro_dir = o.repro_dir};
  if (!r.reference_ort_library.empty()) ro.reference.ort_library = r.reference_ort_library;
  if (!r.target_ort_library.empty()) ro.target.ort_library = r.target_ort_library;
  PARITY_ASSIGN_OR_RETURN(auto sample, PickSample(model, r.sample, note));
  PARITY_ASSIGN_OR_RETURN(auto report, LocateAcrossRuntimes(model, sample, ro));
  return LocateOutcome{.report = std::move(report), .across_runtimes = true};
}

}  // namespace

Result<LocateOutcome> LocateAny(const LocateRequest& r, const NoteSink& note) {
  PARITY_ASSIGN_OR_RETURN(auto model, Model::Load(r.model));
  std::optional<Model> derived;
  if (!r.target_model.empty()) {
    PARITY_ASSIGN_OR_RETURN(auto m, Model::Load(r.target_model));
    derived = std::move(m);
  }
  const bool two_runtimes = !r.reference_ort_library.empty() || !r.target_ort_library.empty();
  const Model* target = derived ? &*derived : nullptr;
  return ForReference(
      r.reference,
      [&](const std::filesystem::path&) -> Result<LocateOutcome> {
        if (two_runtimes)
          return InvalidArgument("--reference torch:DIR runs no ONNX Runtime to compare with --reference-ort-library");
        return LocateTorch(r, model, target, note);
      },
      [&]() -> Result<LocateOutcome> {
        if (two_runtimes) return LocateRuntimes(r, model, note);
        PARITY_ASSIGN_OR_RETURN(auto sample, PickSample(model, r.sample, note));
        PARITY_ASSIGN_OR_RETURN(auto report, Locate(model, target, sample, r.options));
        return LocateOutcome{.report = std::move(report)};
      });
}

}  // namespace parity
