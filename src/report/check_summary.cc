#include "report/check_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace parity {

int CulpritRank(std::string_view id) {
  const auto has = [&](std::string_view part) { return id.find(part) != std::string_view::npos; };
  if (has(".locate.top_culprit") || has(".torch.first_divergent_layer")) return 0;
  if (has(".locate.model_difference") || has(".torch.unexplained_divergence")) return 1;
  if (has(".locate") || has(".torch.layers") || has(".reference_model.")) return 2;
  return 3;
}

std::vector<FailedTest> FailedTestsCulpritFirst(const CheckReport& r) {
  std::vector<FailedTest> failed;
  for (const auto& stage : r.stages) {
    const size_t first = failed.size();
    for (const auto& f : stage.findings)
      if (f.status == Verdict::kFail) failed.push_back({&stage, &f});
    std::stable_sort(failed.begin() + static_cast<std::ptrdiff_t>(first), failed.end(),
                     [](const FailedTest& a, const FailedTest& b) {
                       return CulpritRank(a.finding->id) < CulpritRank(b.finding->id);
                     });
  }
  return failed;
}

std::string_view JudgedAgainstKind(const CheckReport& r) {
  if (r.config && !r.config->torch.empty()) return "torch";
  if (r.model && !r.model->reference_model.empty()) return "reference_model";
  return "config";
}

std::string JudgedAgainst(const CheckReport& r) {
  const std::string config = r.config ? r.config->reference.Label() : std::string("disable");
  const std::string_view kind = JudgedAgainstKind(r);
  std::string model_ref =
      r.model && !r.model->reference_model.empty()
          ? fmt::format("the reference model {} under [{}]", r.model->reference_model, config)
          : fmt::format("the same model under [{}]", config);
  if (r.reference_runtime)  // two ORT releases: both named
    model_ref += fmt::format(" on onnxruntime {} ({}; the target runs onnxruntime {}, {})",
                             r.reference_runtime->version, r.reference_runtime->library,
                             r.env ? r.env->ort_version : "?", r.env ? r.env->ort_library : "?");
  if (kind != "torch")
    return fmt::format("judged against: {} only; PyTorch was not consulted (give --torch DIR, a dump of "
                       "python -m parity.torch dump, to judge against PyTorch)",
                       model_ref);
  size_t torch_samples = 0;
  for (const auto& s : r.samples) torch_samples += s.name.starts_with("torch");
  std::vector<std::string> dumps{r.config->torch};
  dumps.insert(dumps.end(), r.config->more_torch.begin(), r.config->more_torch.end());
  return fmt::format("judged against: the PyTorch dump{} {} ({} sample{}) and {}", dumps.size() > 1 ? "s" : "",
                     fmt::join(dumps, ", "), torch_samples, torch_samples == 1 ? "" : "s", model_ref);
}

}  // namespace parity
