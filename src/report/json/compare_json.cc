#include "report/json/compare_json.h"

#include <cmath>

#include "report/json/json_helpers.h"

namespace parity {

nlohmann::json MetricsToJson(const TensorMetrics& m) {
  return {{"count", m.count},
          {"finite_pairs", m.finite_pairs},
          {"max_abs", JsonNumber(m.max_abs)},
          {"max_abs_index", m.max_abs_index},
          {"max_abs_flat_index", m.max_abs_flat_index},
          {"ref_at_max", JsonNumber(m.ref_at_max)},
          {"test_at_max", JsonNumber(m.test_at_max)},
          {"max_rel", JsonNumber(m.max_rel)},
          {"rel_undefined", m.rel_undefined},
          {"mean_abs", JsonNumber(m.mean_abs)},
          {"rmse", JsonNumber(m.rmse)},
          {"cosine", JsonNumber(m.cosine)},
          {"snr_db", JsonNumber(m.snr_db)},
          {"atol", m.atol},
          {"rtol", m.rtol},
          {"mismatches", m.mismatches},
          {"nan_ref", m.nan_ref},
          {"nan_test", m.nan_test},
          {"inf_ref", m.inf_ref},
          {"inf_test", m.inf_test},
          {"nan_mismatch", m.nan_mismatch},
          {"nan_equal", m.nan_equal},
          {"inf_equal", m.inf_equal},
          {"inf_mismatch", m.inf_mismatch},
          {"ref_range",
           {{"finite", m.ref_finite},
            {"min", JsonNumber(m.ref_min)},
            {"max", JsonNumber(m.ref_max)},
            {"mean", JsonNumber(m.ref_mean)},
            {"std", JsonNumber(m.ref_std)}}},
          {"abs_error_histogram", {{"upper_edges", kHistogramEdges}, {"counts", m.histogram}}}};
}

// null unless the tensor was judged slice by slice (compare/slice_bands.h).
nlohmann::json SliceBandsToJson(const std::optional<SliceBands>& b) {
  if (!b) return nullptr;
  nlohmann::json parts = nlohmann::json::array();
  for (const SlicePart& p : b->parts)
    parts.push_back({{"slices", p.slices},
                     {"count", p.count},
                     {"rms_min", JsonNumber(p.rms_min)},
                     {"rms_max", JsonNumber(p.rms_max)},
                     {"atol_min", JsonNumber(p.atol_min)},
                     {"atol_max", JsonNumber(p.atol_max)},
                     {"rtol", JsonNumber(p.rtol)},
                     {"rule", p.rule},
                     {"failed", p.failed},
                     {"mismatches", p.mismatches},
                     {"max_abs", JsonNumber(p.max_abs)},
                     {"score", JsonNumber(p.score)}});
  return {{"axis", b->axis}, {"length", b->length}, {"gap", JsonNumber(b->gap)}, {"failed", b->failed},
          {"parts", std::move(parts)}};
}

nlohmann::json ResolvedToleranceToJson(const ResolvedTolerance& t) {
  return {{"atol", t.tolerance.atol},
          {"rtol", t.tolerance.rtol},
          {"decide_by", StatisticName(t.tolerance.decide_by)},
          {"quantile", t.tolerance.quantile},
          {"mode", ToleranceModeName(t.mode)},
          {"why", t.Why()},
          {"ref_rms", JsonNumber(t.ref_rms)},
          {"ref_absmax", JsonNumber(t.ref_absmax)},
          {"rules_fired", t.rules_fired},
          {"warnings", t.warnings},
          {"slices", SliceBandsToJson(t.slices)}};
}

nlohmann::json TensorComparisonToJson(const TensorComparison& c) {
  nlohmann::json j = {{"name", c.name},
                      {"status", VerdictName(c.status)},
                      {"tolerance", ResolvedToleranceToJson(c.tolerance)}};
  if (c.test_name != c.name) j["test_name"] = c.test_name;
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (c.status != Verdict::kUnchecked) j["metrics"] = MetricsToJson(c.metrics);
  return j;
}

nlohmann::json StructuralFindingToJson(const StructuralFinding& f) {
  return {{"kind", FindingKindName(f.kind)},
          {"name", f.name},
          {"reference", f.reference},
          {"test", f.test},
          {"fatal", f.fatal}};
}

nlohmann::json SetComparisonToJson(const SetComparison& s) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : s.findings) findings.push_back(StructuralFindingToJson(f));
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : s.tensors) tensors.push_back(TensorComparisonToJson(t));
  // Nothing compared (two empty sets) is no pass: "judged" false, exit 4.
  const bool judged = !s.tensors.empty() || !s.findings.empty();
  return {{"passed", s.passed() && judged}, {"judged", judged}, {"findings", findings}, {"tensors", tensors}};
}

nlohmann::json CompareReportToJson(const SetComparison& s, const std::string& reference, const std::string& test,
                                   const std::string& noise, const TolerancePolicy& policy,
                                   const nlohmann::json& env) {
  nlohmann::json j = SetComparisonToJson(s);
  j["schema"] = "parity.compare/1";
  j["reference"] = reference;
  j["test"] = test;
  if (!noise.empty()) j["noise_reference"] = noise;
  j["policy"] = TolerancePolicyToJson(policy);
  j["env"] = env;
  return j;
}

}  // namespace parity
