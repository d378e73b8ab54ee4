#include "report/runtimes_report.h"

#include <fmt/format.h>

#include "report/text_escape.h"

namespace parity {

using json = nlohmann::json;

json RanWhatToJson(const RanWhat& r) {
  json j = {{"kind", std::string(RanKindName(r.kind))}};
  if (r.is_ort()) {
    j["ort"] = {{"version", r.ort.version}, {"library", r.ort.library}, {"origin", r.ort.origin}};
    j["config"] = RunConfigToJson(r.config);
    j["config"]["label"] = r.config.Label();
  } else {
    j["source"] = r.source.string();
  }
  return j;
}

namespace {

json FusionsToJson(const std::vector<PlanFusion>& list) {
  json out = json::array();
  for (const auto& f : list) out.push_back({{"name", f.name}, {"op_type", f.op_type}, {"covers", f.covers}});
  return out;
}

std::string Runtime(const RanWhat& r) { return fmt::format("onnxruntime {} ({})", r.ort.version, r.ort.library); }

void FusionLines(const std::vector<PlanFusion>& list, const RanWhat& only, std::vector<std::string>& lines) {
  for (const auto& f : list)
    lines.push_back(fmt::format("  only onnxruntime {} fuses '{}' ({}), covering {} node(s): {}{}", only.ort.version,
                                ConsoleName(f.name), ConsoleName(f.op_type), f.covers.size(),
                                ConsoleName(f.covers.empty() ? "" : f.covers.front()),
                                f.covers.size() > 1 ? fmt::format(" ... {}", ConsoleName(f.covers.back())) : ""));
}

}  // namespace

json RuntimesToJson(const RuntimeComparison& r) {
  return {{"reference", RanWhatToJson(r.reference)},
          {"target", RanWhatToJson(r.target)},
          {"plans_identical", r.plans_identical()},
          {"reference_fused", r.reference_fused},
          {"target_fused", r.target_fused},
          {"only_reference", FusionsToJson(r.only_reference)},
          {"only_target", FusionsToJson(r.only_target)}};
}

std::vector<std::string> RuntimeLines(const RuntimeComparison& r) {
  std::vector<std::string> lines = {fmt::format("reference runtime: {}", Runtime(r.reference)),
                                    fmt::format("target runtime:    {}", Runtime(r.target))};
  if (r.plans_identical()) {
    lines.push_back(fmt::format("plans: identical ({} fused nodes in each)", r.target_fused));
    return lines;
  }
  lines.push_back(fmt::format("plans: differ ({} fused nodes in the reference's, {} in the target's)",
                              r.reference_fused, r.target_fused));
  FusionLines(r.only_reference, r.reference, lines);
  FusionLines(r.only_target, r.target, lines);
  return lines;
}

json OrtFactsToJson(const std::vector<OrtFact>& runtimes) {
  json out = json::array();
  for (const auto& r : runtimes) out.push_back({{"version", r.version}, {"library", r.library}, {"origin", r.origin}});
  return out;
}

std::string FormatRuntimes(const std::vector<OrtFact>& runtimes) {
  std::string s;
  for (const auto& r : runtimes) s += fmt::format("runtime       {} ({})\n", r.version, r.library);
  return s;
}

}  // namespace parity
