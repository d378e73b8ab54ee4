#include "report/bench_report.h"

#include "engine/run/environment_json.h"

namespace parity {
namespace {

nlohmann::json LatencyToJson(const LatencyStats& s) {
  return {{"runs", s.runs},     {"mean_ms", s.mean_ms}, {"p50_ms", s.p50_ms}, {"p95_ms", s.p95_ms},
          {"p99_ms", s.p99_ms}, {"min_ms", s.min_ms},   {"max_ms", s.max_ms}, {"samples_ms", s.samples_ms}};
}

nlohmann::json ConfigToJson(const BenchConfigResult& c) {
  nlohmann::json j = {{"label", c.label},
                      {"config", RunConfigToJson(c.config)},
                      {"session_creation_ms", c.session_creation_ms},
                      {"latency", LatencyToJson(c.latency)},
                      {"peak_rss_bytes", c.peak_rss_bytes},
                      {"session_rss_bytes", c.session_rss_bytes},
                      {"max_abs_vs_reference", nullptr},
                      {"nonfinite_mismatch", c.nonfinite_mismatch},
                      {"error", nullptr}};
  if (c.max_abs_vs_reference >= 0) j["max_abs_vs_reference"] = c.max_abs_vs_reference;
  if (!c.error.empty()) j["error"] = c.error;
  return j;
}

}  // namespace

nlohmann::json BenchReportToJson(const BenchReport& r) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& c : r.configs) configs.push_back(ConfigToJson(c));
  nlohmann::json j = {
      {"schema", "parity.bench/1"},
      {"tool", {{"name", "parity"}, {"version", r.tool_version}}},
      {"ort", OrtToJson(r.ort)},
      {"model", r.model},
      {"sample", {{"name", r.sample}, {"inputs", r.input_summary}}},
      {"reference", r.reference.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reference)},
      {"latency_options", {{"warmup", r.warmup}, {"runs", r.runs}, {"max_seconds", r.max_seconds}}},
      {"configs", configs},
      {"fusions", nullptr},
  };
  if (r.fusions_requested) {
    nlohmann::json fusions = nlohmann::json::array();
    for (const auto& f : r.fusions) {
      nlohmann::json fj = {{"optimizer", f.optimizer},
                           {"switched_off", f.switched_off},
                           {"without", ConfigToJson(f.without)},
                           {"speed_ms", f.speed_ms},
                           {"precision_cost", f.precision_cost}};
      fusions.push_back(fj);
    }
    j["fusions"] = {{"from", r.fused_config}, {"optimizers", fusions}};
  }
  return j;
}

}  // namespace parity
