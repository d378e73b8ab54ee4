#include "report/json/check_json.h"

#include <cmath>
#include <string>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "engine/run/environment_json.h"
#include "report/control_flow_writer.h"
#include "report/ep_report.h"
#include "report/json/compare_json.h"
#include "report/json/inspect_json.h"
#include "report/json/json_helpers.h"
#include "report/locate_report.h"
#include "report/check_summary.h"
#include "report/quant_report.h"
#include "report/json/torch_json.h"
#include "report/generation_report.h"

namespace parity {

namespace {

using nlohmann::json;

json FindingToJson(const CheckFinding& f) {
  json j = {{"id", f.id}, {"status", CheckVerdictName(f.status)}, {"message", f.message}};
  if (f.warning) j["warning"] = true;
  return j;
}

json StageToJson(const StageResult& s, size_t index) {
  json findings = json::array();
  for (const auto& f : s.findings) findings.push_back(FindingToJson(f));
  return {{"name", s.name},
          {"index", index},
          {"status", CheckVerdictName(s.status)},
          {"seconds", JsonNumber(s.seconds)},
          {"findings", findings}};
}

json OutputToJson(const OutputResult& o) {
  const TensorComparison& c = o.comparison;
  json j = {{"output", o.output},
            {"against", o.against},
            {"status", VerdictName(c.status)},
            {"reason", c.reason.empty() ? json(nullptr) : json(c.reason)},
            {"tolerance", ResolvedToleranceToJson(c.tolerance)},
            {"metrics", c.status == Verdict::kUnchecked ? json(nullptr) : MetricsToJson(c.metrics)}};
  if (c.test_name != c.name && !c.test_name.empty()) j["test_name"] = c.test_name;
  return j;
}

json SampleToJson(const SampleResult& s) {
  json outputs = json::array();
  for (const auto& o : s.outputs) outputs.push_back(OutputToJson(o));
  return {{"name", s.name},
          {"kind", s.kind},
          {"input_summary", s.input_summary},
          {"status", s.StatusWord()},
          {"error", s.error.empty() ? json(nullptr) : json(s.error)},
          {"behaviour", s.behaviour.empty() ? json(nullptr) : json(s.behaviour)},
          {"outputs", outputs}};
}

// Tracks the extreme of one metric over all outputs, with where it was seen.
struct Extreme {
  explicit Extreme(bool lowest_is_worst) : lowest(lowest_is_worst) {}
  bool lowest;  // true: the minimum is the worst (cosine, snr)
  bool seen = false;
  double value = 0;
  std::string sample, output;

  void Offer(double v, const std::string& s, const std::string& o) {
    if (std::isnan(v)) {
      // NaN only happens on a broken comparison: it is the worst there is.
      if (!seen || !std::isnan(value)) value = v, sample = s, output = o, seen = true;
      return;
    }
    if (seen && std::isnan(value)) return;
    if (!seen || (lowest ? v < value : v > value)) value = v, sample = s, output = o, seen = true;
  }
  json ToJson() const {
    if (!seen) return nullptr;
    return {{"value", JsonNumber(value)}, {"sample", sample}, {"output", output}};
  }
};

// The model's required keys, null when the pipeline could not learn them
// (a model that does not load has no opsets).

}  // namespace

// `coverage`: what the verdict rests on; `missing` non-empty: NOT JUDGED.
json CoverageToJson(const CheckCoverage& c) {
  return {{"samples", c.samples},
          {"judged", c.judged},
          {"refused", c.refused},
          {"timed_out", c.timed_out},
          {"outputs_judged", c.outputs_judged},
          {"layers_aligned", c.layers_aligned},
          {"layers_unchecked", c.layers_unchecked},
          {"generation_steps", c.generation_steps},
          {"branches_unjudged", c.branches_unjudged},
          {"missing", c.missing}};
}

json CheckModelToJson(const CheckReport& r) {
  if (!r.model) {
    json j = json::object();
    for (const char* key : {"path", "sha256", "opsets", "inputs", "outputs"}) j[key] = nullptr;
    return j;
  }
  const CheckedModel& m = *r.model;
  json j = ModelInfoToJson(m.info);
  j["path"] = m.path;
  j["sha256"] = m.sha256 ? json(*m.sha256) : json(nullptr);
  if (!m.reference_model.empty()) j["reference_model"] = m.reference_model;
  return j;
}

json CheckConfigToJson(const CheckReport& r) {
  if (!r.config) return json::object();
  const CheckConfig& c = *r.config;
  json j = {{"reference", RunConfigToJson(c.reference)},
            {"target", RunConfigToJson(c.target)},
            {"tolerance", TolerancePolicyToJson(c.tolerance)},
            {"samples", c.samples},
            {"seed", c.seed}};
  if (!c.torch.empty()) j["torch"] = c.torch;
  if (!c.more_torch.empty()) j["torch_more"] = c.more_torch;
  return j;
}

json CheckEnvToJson(const CheckReport& r) { return r.env ? EnvironmentToJson(*r.env) : json::object(); }

json CheckMetricsSummary(const CheckReport& r) {
  int64_t compared = 0, failed = 0, unchecked = 0, mismatches = 0, nan_mismatch = 0, elements = 0;
  Extreme max_abs(false), max_rel(false), cosine(true), snr(true);
  for (const auto& s : r.samples) {
    for (const auto& o : s.outputs) {
      const TensorComparison& c = o.comparison;
      if (c.status == Verdict::kUnchecked) {
        ++unchecked;
        continue;
      }
      ++compared;
      failed += c.status == Verdict::kFail;
      const TensorMetrics& m = c.metrics;
      mismatches += m.mismatches;
      nan_mismatch += m.nan_mismatch;
      elements += m.count;
      max_abs.Offer(m.max_abs, s.name, o.output);
      max_rel.Offer(m.max_rel, s.name, o.output);
      cosine.Offer(m.cosine, s.name, o.output);
      snr.Offer(m.snr_db, s.name, o.output);
    }
  }
  int64_t samples_failed = 0, samples_raised = 0;
  for (const auto& s : r.samples) {
    samples_failed += s.status == Verdict::kFail;
    samples_raised += !s.error.empty();
  }
  return {{"samples", r.samples.size()},        {"samples_failed", samples_failed},
          {"samples_raised", samples_raised},   {"outputs_compared", compared},
          {"outputs_failed", failed},           {"outputs_unchecked", unchecked},
          {"elements_compared", elements},      {"total_mismatches", mismatches},
          {"total_nan_mismatch", nan_mismatch}, {"worst_max_abs", max_abs.ToJson()},
          {"worst_max_rel", max_rel.ToJson()},  {"min_cosine", cosine.ToJson()},
          {"min_snr_db", snr.ToJson()}};
}

json PerformanceToJson(const PerformanceResult& p) {
  const LatencyStats& l = p.latency;
  json samples = json::array();
  for (double v : l.samples_ms) samples.push_back(JsonNumber(v));
  return {{"config", p.config},
          {"sample", p.sample},
          {"inputs", p.inputs},
          {"session_creation_ms", JsonNumber(p.session_creation_ms)},
          {"latency",
           {{"runs", l.runs},
            {"mean_ms", JsonNumber(l.mean_ms)},
            {"p50_ms", JsonNumber(l.p50_ms)},
            {"p95_ms", JsonNumber(l.p95_ms)},
            {"p99_ms", JsonNumber(l.p99_ms)},
            {"min_ms", JsonNumber(l.min_ms)},
            {"max_ms", JsonNumber(l.max_ms)},
            {"samples_ms", samples},
            {"reused_runs", l.reused_runs}}},
          {"peak_rss_bytes", p.peak_rss_bytes},
          {"gpu_peak_bytes", p.gpu_peak_bytes ? json(*p.gpu_peak_bytes) : json(nullptr)},
          {"deterministic", p.deterministic}};
}

json LayerErrorPointToJson(const LayerErrorPoint& p) {
  return {{"index", p.index},
          {"tensor", p.tensor},
          {"producer", p.producer},
          {"op_type", p.op_type},
          {"max_abs", JsonNumber(p.max_abs)},
          {"error_ratio", JsonNumber(p.error_ratio)},
          {"status", VerdictName(p.status)}};
}

namespace {

// The roles of generated samples' inputs and the size relations kept
// (docs/inputs.md); null when the samples were given.
json GeneratedInputsToJson(const SampleNotes& notes) {
  if (notes.roles.empty()) return nullptr;
  json roles = json::object();
  for (const auto& [name, role] : notes.roles) roles[name] = InputRoleName(role);
  json j = {{"roles", roles}, {"relations", notes.relations}};
  if (!notes.bounded.empty()) j["bounded"] = notes.bounded;  // dims made smaller to bound the samples
  return j;
}

}  // namespace

json CheckReportToJson(const CheckReport& r) {
  json failed = json::array();
  for (const auto& [stage, f] : FailedTestsCulpritFirst(r))
    failed.push_back({{"id", f->id}, {"stage", stage->name}, {"reason", f->message}});
  json stages = json::object();
  for (size_t i = 0; i < r.stages.size(); ++i) stages[r.stages[i].name] = StageToJson(r.stages[i], i);
  json samples = json::array();
  for (const auto& s : r.samples) samples.push_back(SampleToJson(s));
  json performance = json::array();
  for (const auto& p : r.performance) performance.push_back(PerformanceToJson(p));
  json curve = json::array();
  for (const auto& p : r.layer_curve) curve.push_back(LayerErrorPointToJson(p));
  json warnings = json::array();
  for (const auto& stage : r.stages)
    for (const auto& f : stage.findings)
      if (f.warning)
        warnings.push_back({{"id", f.id}, {"stage", stage.name}, {"status", CheckVerdictName(f.status)},
                            {"message", f.message}});
  json runs = {{"total", 0}, {"steps", json::array()}};
  for (const StepRuns& step : r.ort_runs) {
    runs["total"] = runs["total"].get<int64_t>() + step.runs;
    runs["steps"].push_back({{"step", step.step}, {"runs", step.runs}});
  }
  json refusals = json::array();
  for (const SampleResult* s : r.ExpectedRefusals())
    refusals.push_back({{"sample", s->name}, {"status", s->StatusWord()}, {"reason", s->error}});
  return {{"schema", "parity.check/1"},
          {"judged_against", {{"kind", JudgedAgainstKind(r)}, {"text", JudgedAgainst(r)}}},
          {"expected_refusals", refusals},
          {"tool", {{"name", "parity"}, {"version", r.tool_version}}},
          {"env", CheckEnvToJson(r)},
          {"reference_runtime", r.reference_runtime ? json{{"version", r.reference_runtime->version},
                                                           {"library", r.reference_runtime->library},
                                                           {"origin", r.reference_runtime->origin}}
                                                     : json(nullptr)},
          {"model", CheckModelToJson(r)},
          {"config", CheckConfigToJson(r)},
          {"overall_status", r.OverallWord()},
          {"coverage", CoverageToJson(r.coverage)},
          {"failed_tests", failed},
          {"warnings", warnings},
          {"stages", stages},
          {"ort_runs", runs},
          {"samples", samples},
          {"metrics", CheckMetricsSummary(r)},
          {"performance", performance},
          {"layer_curve", curve},
          {"locate", r.locate ? LocateReportToJson(*r.locate) : json(nullptr)},
          {"quant", r.quant ? QuantReportToJson(*r.quant) : json(nullptr)},
          {"top1", Top1ToJson(r.top1)},
          {"detections", DetectionsToJson(r.detections)},
          {"alignment", r.alignment ? TorchComparisonToJson(*r.alignment) : json(nullptr)},
          {"generation", r.generation ? GenerationToJson(*r.generation) : json(nullptr)},
          {"generation_prompts", GenerationPromptsToJson(r.generation_prompts)},
          {"target_assignment", AssignmentToJson(r.target_assignment)},
          {"arithmetic", ArithmeticToJson(r.arithmetic)},
          {"tf32_probe", r.tf32_probe.empty() ? json(nullptr) : json(r.tf32_probe)},
          {"notes", r.notes},
          {"generated_inputs", GeneratedInputsToJson(r.sample_notes)},
          {"control_flow", ControlFlowToJson(r.control_flow)}};
}

}  // namespace parity
