#include "engine/locate/repro.h"

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "core/visible_text.h"
#include "engine/run/tensor_source.h"

namespace parity {

namespace {

// Invalid UTF-8 (an optimizer name from the command line) becomes U+FFFD
// instead of throwing (core/json_out.h).
std::string JsonText(const nlohmann::json& j) { return ToJsonText(j, 2) + "\n"; }

// Keys "default/NAME" when a name holds '/' ("/layer1/Relu_output_0"): a bare
// key with a '/' would be read back as SAMPLE/INPUT and the README's command
// would not find its inputs.
TensorSet AsOneSample(const TensorSet& tensors) {
  bool slash = false;
  for (const auto& nt : tensors) slash = slash || nt.name.find('/') != std::string::npos;
  if (!slash) return tensors;
  TensorSet out;
  for (const auto& nt : tensors) out.Set("default/" + nt.name, nt.tensor);
  return out;
}

}  // namespace

Status CheckReproDir(const std::filesystem::path& dir) {
  return WithContext(CheckReplaceableOutputDir(dir, kReproKind, kReproFiles), "--repro");
}

Status WriteRepro(const std::filesystem::path& dir, const ReproContent& c) {
  // Everything small is rendered before the first file is written, so a
  // failure there leaves no partial folder.
  const auto& culprit = *c.culprit;
  RunConfig target = c.target;
  target.optimized_model_path.clear();
  target.ort_library.clear();  // a stored config names no library: the command's flags do
  const std::string target_json = JsonText(RunConfigToJson(target));
  std::string reference_json;
  std::string command = "parity locate model.onnx --inputs inputs.npz --target target.json";
  if (c.reference.opt_level != OptLevel::kDisable || c.reference.disabled_optimizers.size() > 0) {
    RunConfig reference = c.reference;
    reference.optimized_model_path.clear();
    reference.ort_library.clear();
    reference_json = JsonText(RunConfigToJson(reference));
    command += " --reference reference.json";
  }
  if (c.separate_target_model) command += " --target-model target_model.onnx";
  if (!c.extra_flags.empty()) command += " " + c.extra_flags;
  const auto& e = culprit.local;
  // Names come from the model: each sits in a code span it cannot close, with
  // its control characters shown (a newline cannot start a forged "Run:").
  std::string readme = fmt::format(
      "# parity reproduction: {} ({})\n\n"
      "Cut from {}. The region covers {} original node(s):\n\n",
      MarkdownCode(culprit.fused_node), MarkdownCode(culprit.op_type), MarkdownCode(c.source_model),
      culprit.covers.size());
  for (const auto& n : culprit.covers) readme += fmt::format("- {}\n", MarkdownCode(n));
  readme += fmt::format(
      "\nFed the reference values of its inputs (`inputs.npz`), the region computes `expected.npz` under "
      "the reference config {} and `actual.npz` under the target config {}%s.\n\n"
      "Run:\n\n```\n{}\n```\n\n"
      "It should report a divergence (exit code 1) at {}: max_abs {:.6g}, {} element(s) outside the "
      "tolerance, score {:.3g} (1 = the edge of the tolerance band).\n",
      MarkdownCode(c.reference.Label()), MarkdownCode(c.target.Label()), command, MarkdownCode(e.tensor), e.max_abs,
      e.mismatches, e.score);
  readme += c.readme_extra;
  const std::string marker = "%s";
  if (auto pos = readme.find(marker); pos != std::string::npos)
    readme.replace(pos, marker.size(),
                   c.separate_target_model ? " (the target region, `target_model.onnx`, comes from the derived "
                                             "model)"
                                           : "");

  // Staged beside `dir`, put in place whole once every file is written.
  auto staged = StageOutputDir(dir, kReproKind, kReproFiles);
  if (!staged) return std::unexpected(staged.error().With("--repro"));
  const std::filesystem::path& out = staged->path();
  PARITY_RETURN_IF_ERROR(c.region->reference.Save(out / "model.onnx"));
  if (c.separate_target_model) PARITY_RETURN_IF_ERROR(c.region->target.Save(out / "target_model.onnx"));
  PARITY_RETURN_IF_ERROR(SaveTensors(out / "inputs.npz", AsOneSample(c.region->inputs)));
  PARITY_RETURN_IF_ERROR(SaveTensors(out / "expected.npz", c.run->expected));
  PARITY_RETURN_IF_ERROR(SaveTensors(out / "actual.npz", c.run->actual));
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(out / "target.json", target_json));
  if (!reference_json.empty()) PARITY_RETURN_IF_ERROR(WriteFileAtomic(out / "reference.json", reference_json));
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(out / "README.md", readme));
  return WithContext(staged->Commit(/*replace=*/true), "--repro");
}

}  // namespace parity
