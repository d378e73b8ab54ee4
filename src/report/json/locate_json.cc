// JSON writer of the locate report (schema parity.locate/1, docs/locate.md).
#include <cmath>
#include <limits>

#include "engine/run/environment_json.h"
#include "report/ep_report.h"
#include "report/json/compare_json.h"
#include "report/control_flow_writer.h"
#include "report/json/json_helpers.h"
#include "report/locate_report.h"
#include "report/quant_report.h"
#include "report/runtimes_report.h"

namespace parity {

namespace {

using nlohmann::json;

json ErrorJson(const ErrorSummary& e) {
  if (e.tensor.empty()) return nullptr;
  return json{{"tensor", e.tensor},        {"max_abs", JsonNumber(e.max_abs)}, {"max_rel", JsonNumber(e.max_rel)},
              {"mismatches", e.mismatches}, {"score", JsonNumber(e.score)},     {"pass", e.pass}};
}

json AblationJson(const LocateAblation& a) {
  json j{{"optimizer", a.optimizer.empty() ? json(nullptr) : json(a.optimizer)},
         {"tried", a.tried},
         {"also_removing", a.also_removing},
         {"local_with", ErrorJson(a.local_with)},
         {"local_without", ErrorJson(a.local_without)},
         {"output_with", ErrorJson(a.output_with)},
         {"output_without", ErrorJson(a.output_without)},
         {"latency_ms_with", JsonNumber(a.latency_ms_with)},
         {"latency_ms_without", JsonNumber(a.latency_ms_without)}};
  if (!a.note.empty()) j["note"] = a.note;
  return j;
}

json NarrowingJson(const LocateNarrowing& n) {
  json steps = json::array();
  for (const auto& s : n.steps)
    steps.push_back({{"covers", s.covers},
                     {"inputs", s.inputs},
                     {"outputs", s.outputs},
                     {"groups", s.groups},
                     {"measured", s.measured},
                     {"local", s.measured ? ErrorJson(s.local) : json(nullptr)}});
  return {{"steps", steps},
          {"complete", n.complete},
          {"note", n.note.empty() ? json(nullptr) : json(n.note)},
          {"sessions", n.sessions},
          {"sub_regions_run", n.sub_regions_run}};
}

json FirstDivergenceJson(const std::optional<FirstDivergence>& first) {
  if (!first) return nullptr;
  const auto& d = *first;
  json j{{"tensor", d.tensor},
         {"producer", d.producer},
         {"fused_node", d.fused_node},
         {"op_type", d.op_type},
         {"covered_nodes", d.covers}};
  if (!d.body.empty()) j["body"] = d.body;
  return j;
}

}  // namespace

nlohmann::json LocateReportToJson(const LocateReport& r) {
  json j = {{"schema", "parity.locate/1"}, {"ort", OrtToJson(r.ort)}};
  j["model"] = r.model;
  j["target_model"] = r.target_model.empty() ? json(nullptr) : json(r.target_model);
  j["sample"] = r.sample;
  j["reference"] = RunConfigToJson(r.reference);
  j["reference"]["kind"] = ReferenceKindName(r.reference_kind);
  j["reference"]["label"] = r.reference.Label();
  j["target"] = RunConfigToJson(r.target);
  j["target"]["label"] = r.target.Label();
  j["observer_check"] = r.observer_check;
  j["observer_mode"] = r.observer_mode;
  j["observer_notes"] = r.observer_notes;
  j["target_assignment"] = AssignmentToJson(r.target_assignment);
  j["arithmetic"] = ArithmeticToJson(r.arithmetic);
  j["summary"] = {{"original_nodes", r.original_nodes},
                  {"optimized_nodes", r.optimized_nodes},
                  {"fused_nodes", r.fused_nodes.size()},
                  {"tensors", r.tensors.size()},
                  {"pass", r.CountStatus(Verdict::kPass)},
                  {"fail", r.CountStatus(Verdict::kFail)},
                  {"unchecked", r.CountStatus(Verdict::kUnchecked)},
                  {"sessions_created", r.sessions_created},
                  {"wall_ms", r.wall_ms}};
  json fused = json::array();
  for (const auto& f : r.fused_nodes)
    fused.push_back({{"name", f.name},
                     {"op_type", f.op_type},
                     {"domain", f.domain},
                     {"nodes", f.nodes},
                     {"op_types", f.op_types},
                     {"covers", f.covers},
                     {"inputs", f.inputs},
                     {"outputs", f.outputs}});
  j["fused_nodes"] = fused;
  json tensors = json::array();
  for (const auto& t : r.tensors) {
    json e{{"name", t.name},
           {"producer", t.producer},
           {"fused_node", t.fused_node.empty() ? json(nullptr) : json(t.fused_node)},
           {"index", t.index},
           {"status", std::string(VerdictName(t.status))}};
    if (!t.reason.empty()) e["reason"] = t.reason;
    if (t.metrics) {
      e["metrics"] = MetricsToJson(*t.metrics);
      e["tolerance"] = {{"atol", t.tolerance.atol},
                        {"rtol", t.tolerance.rtol},
                        {"decide_by", std::string(StatisticName(t.tolerance.decide_by))}};
      e["score"] = JsonNumber(t.score);
    }
    tensors.push_back(std::move(e));
  }
  j["tensors"] = tensors;
  j["first_divergence"] = FirstDivergenceJson(r.first_divergence);
  json culprits = json::array();
  for (const auto& c : r.culprits) {
    json e{{"fused_node", c.fused_node}, {"op_type", c.op_type},       {"fused", c.fused},
           {"covers", c.covers},         {"inputs", c.inputs},         {"outputs", c.outputs},
           {"local", ErrorJson(c.local)}, {"inherited", ErrorJson(c.inherited)}};
    e["ablation"] = c.ablation ? AblationJson(*c.ablation) : json(nullptr);
    e["narrowing"] = c.narrowing ? NarrowingJson(*c.narrowing) : json(nullptr);
    if (!c.note.empty()) e["note"] = c.note;
    if (!c.body.empty()) e["body"] = c.body;
    culprits.push_back(std::move(e));
  }
  j["culprits"] = culprits;
  j["repro"] = r.repro.empty() ? json(nullptr) : json({{"path", r.repro}});
  j["quant"] = r.quant ? QuantReportToJson(*r.quant) : json(nullptr);
  j["notes"] = r.notes;
  j["control_flow"] = ControlFlowToJson(r.control_flow);
  j["runtimes"] = r.runtimes ? RuntimesToJson(*r.runtimes) : json(nullptr);
  return j;
}

}  // namespace parity
