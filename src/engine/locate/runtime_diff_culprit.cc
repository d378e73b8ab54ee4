// The fused node at the first divergence between two runtimes, cut out and
// run on both fed the reference runtime's values of its inputs: its local
// error is its kernel's (runtime_diff.h). The repro says both versions.
#include <fmt/format.h>

#include <set>

#include "compare/judge.h"
#include "core/shell_word.h"
#include "core/visible_text.h"
#include "engine/locate/local_error.h"
#include "engine/locate/locate_internal.h"
#include "engine/locate/repro.h"
#include "engine/locate/runtime_diff_internal.h"

namespace parity::runtime_diff {
namespace {

std::string Named(const RanWhat& r) { return fmt::format("onnxruntime {} ({})", r.ort.version, r.ort.library); }

// The reference runtime's values of the region's inputs: the sample's, the
// observed ones, and any other asked of the reference runner once more.
Result<TensorSet> InputValues(Diff& d, const FusedRegion& region) {
  TensorSet values;
  std::vector<std::string> missing;
  for (const auto& name : region.boundary) {
    if (const Tensor* t = d.sample.tensors.Find(name)) {
      values.Set(name, *t);
    } else if (const Tensor* v = d.reference.values.Find(name)) {
      values.Set(name, *v);
    } else {
      missing.push_back(name);
    }
  }
  if (missing.empty()) return values;
  PARITY_ASSIGN_OR_RETURN(TensorSet more,
                          d.reference.runner->Run({.model = d.model_path, .names = missing}, d.sample.tensors));
  ++d.jobs;
  for (const auto& nt : more) values.Set(nt.name, nt.tensor);
  return values;
}

Result<ErrorSummary> Worst(const std::vector<std::string>& names, const TensorSet& ref, const TensorSet& test,
                           const TolerancePolicy& policy) {
  ErrorSummary worst;
  for (const auto& name : names) {
    const Tensor* r = ref.Find(name);
    const Tensor* t = test.Find(name);
    if (r == nullptr || t == nullptr) continue;
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, *r, *t, policy));
    KeepWorst(worst, Summarize(name, j));
  }
  return worst;
}

// Which plan makes the region, in words (the culprit's note).
std::string PlanNote(const Diff& d, const FusedRegion& region, const RuntimeComparison& rc) {
  auto has = [&](const std::vector<PlanFusion>& list) {
    for (const auto& f : list)
      if (f.covers == region.covers) return true;
    return false;
  };
  const std::string main = locate_internal::MainNodeName(region);
  if (has(rc.only_reference))
    return fmt::format("'{}' ({}) is fused by {} only; {} does not make this fusion", main, region.OpSummary(),
                       Named(rc.reference), Named(rc.target));
  if (has(rc.only_target))
    return fmt::format("'{}' ({}) is fused by {} only; {} does not make this fusion", main, region.OpSummary(),
                       Named(rc.target), Named(rc.reference));
  return fmt::format("both runtimes make the same node '{}' ({}): its kernel computes differently", main,
                     region.OpSummary());
}

Status WriteRuntimeRepro(Diff& d, const RegionModels& models, const RegionRun& run, const LocateCulprit& culprit,
                         const RuntimeComparison& rc) {
  ReproContent content{.region = &models, .run = &run, .culprit = &culprit,
                       .reference = rc.reference.config, .target = rc.target.config,
                       .source_model = d.options.model_label};
  // Paths are words of a command people paste (issue 56, class 14: a space
  // broke it, `$(...)` in a folder name ran).
  content.extra_flags = fmt::format("--reference-ort-library {} --target-ort-library {}",
                                    ShellWord(rc.reference.ort.library), ShellWord(rc.target.ort.library));
  content.readme_extra = fmt::format(
      "\n## Runtimes\n\n- reference: onnxruntime {} ({}): `expected.npz`\n- target: onnxruntime {} ({}): "
      "`actual.npz`\n\n{}\n",
      MarkdownCode(rc.reference.ort.version), MarkdownCode(rc.reference.ort.library),
      MarkdownCode(rc.target.ort.version), MarkdownCode(rc.target.ort.library), culprit.note);
  return WriteRepro(d.options.repro_dir, content);
}

}  // namespace

Status MeasureCulprit(Diff& d, const FusedRegion& region, LocateReport& report) {
  PARITY_ASSIGN_OR_RETURN(TensorSet inputs, InputValues(d, region));
  PARITY_ASSIGN_OR_RETURN(RegionModels models, CutRegion(*d.named, *d.named, region.boundary, region.outputs, inputs));
  const auto path = d.scratch / "region.onnx";
  PARITY_RETURN_IF_ERROR(models.reference.Save(path));
  RegionRun run;
  PARITY_ASSIGN_OR_RETURN(run.expected,
                          d.reference.runner->Run({.model = path, .names = region.outputs}, models.inputs));
  PARITY_ASSIGN_OR_RETURN(run.actual, d.target.runner->Run({.model = path, .names = region.outputs}, models.inputs));
  d.jobs += 2;
  PARITY_ASSIGN_OR_RETURN(run.local, Worst(region.outputs, run.expected, run.actual, d.options.policy));
  LocateCulprit c{.fused_node = locate_internal::MainNodeName(region), .op_type = region.OpSummary(),
                  .fused = !region.unchanged, .covers = region.covers, .inputs = region.boundary,
                  .outputs = region.outputs, .local = run.local};
  PARITY_ASSIGN_OR_RETURN(c.inherited, Worst(region.boundary, d.reference.values, d.target.values, d.options.policy));
  c.note = PlanNote(d, region, *report.runtimes);
  report.culprits.push_back(c);
  if (d.options.repro_dir.empty()) return {};
  PARITY_RETURN_IF_ERROR(WriteRuntimeRepro(d, models, run, c, *report.runtimes));
  report.repro = d.options.repro_dir.string();
  return {};
}

}  // namespace parity::runtime_diff
