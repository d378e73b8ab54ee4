#include "report/json/baseline_json.h"

namespace parity {

nlohmann::json BaselineReportToJson(const BaselineResult& r, const std::string& manifest_path) {
  nlohmann::json j = r.manifest;
  j["schema"] = "parity.baseline_report/1";
  j["overall_status"] = r.deterministic() ? "PASS" : "FAIL";
  j["manifest"] = manifest_path;
  return j;
}

nlohmann::json VerifyResultToJson(const VerifyResult& r, const nlohmann::json& env) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"file", f.file}, {"kind", VerifyFindingKindName(f.kind)}, {"message", f.message}, {"fatal", f.fatal}});
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : r.changes) changes.push_back({{"field", c.field}, {"recorded", c.recorded}, {"now", c.now}});
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& c : r.comparisons) {
    nlohmann::json t = {{"file", c.name}, {"tensor", c.test_name}, {"status", VerdictName(c.status)}};
    if (!c.reason.empty()) t["reason"] = c.reason;
    if (c.status != Verdict::kUnchecked) {
      t["max_abs"] = c.metrics.max_abs;
      t["mismatches"] = c.metrics.mismatches;
      t["atol"] = c.tolerance.tolerance.atol;
      t["rtol"] = c.tolerance.tolerance.rtol;
    }
    tensors.push_back(std::move(t));
  }
  return {{"schema", "parity.baseline_verify/1"},
          {"overall_status", r.passed() ? "PASS" : "FAIL"},
          {"files_checked", r.files_checked},
          {"model_checked", r.model_checked},
          {"findings", findings},
          {"environment_changes", changes},
          {"tensors", tensors},
          {"env", env}};
}

}  // namespace parity
