// JSON of the per-layer precision report (docs/quantized.md, the `quant`
// object of parity.locate/1 and parity.check/1).
#include "report/json/json_helpers.h"
#include "report/quant_report.h"

namespace parity {

namespace {

using nlohmann::json;

json LossJson(const QuantLoss& l, double step) {
  if (!l.measured) return nullptr;
  return json{{"sqnr_db", JsonNumber(l.sqnr_db)},
              {"max_abs", JsonNumber(l.max_abs)},
              {"max_steps", step > 0 ? JsonNumber(l.max_steps) : json(nullptr)}};
}

}  // namespace

json QuantLayerToJson(const QuantLayer& l) {
  json j{{"node", l.node},
         {"op_type", l.op_type},
         {"module", JsonStringOrNull(l.module)},
         {"tensor", l.tensor},
         {"derived_tensor", l.derived_tensor},
         {"grid", l.grid},
         {"step", JsonNumber(l.step)},
         {"sqnr_db", l.cumulative.measured ? JsonNumber(l.cumulative.sqnr_db) : json(nullptr)},
         {"steps", l.cumulative.measured && l.step > 0 ? JsonNumber(l.cumulative.max_steps) : json(nullptr)},
         {"cumulative", LossJson(l.cumulative, l.step)},
         {"local", LossJson(l.local, l.step)},
         {"inherited_sqnr_db", JsonNumber(l.inherited_sqnr_db)},
         {"inputs", l.inputs},
         {"folded", l.folded},
         {"compute", l.compute},
         {"weight", nullptr},
         {"note", JsonStringOrNull(l.note)}};
  if (l.weight)
    j["weight"] = {{"tensor", l.weight->tensor},
                   {"derived_tensor", l.weight->derived_tensor},
                   {"step", JsonNumber(l.weight->step)},
                   {"loss", LossJson(l.weight->loss, l.weight->step)}};
  return j;
}

json StepTensorJson(const std::optional<QuantStepTensor>& t) {
  if (!t) return nullptr;
  json chain = json::array();
  for (const auto& k : t->chain)
    chain.push_back({{"node", k.node}, {"tensor", k.tensor}, {"steps", JsonNumber(k.steps)}});
  return json{{"tensor", t->tensor},
              {"fused_node", JsonStringOrNull(t->fused_node)},
              {"steps", JsonNumber(t->steps)},
              {"chain", std::move(chain)},
              {"kernel", JsonStringOrNull(t->kernel)}};
}

json DeployedJson(const std::optional<QuantDeployed>& d) {
  if (!d) return nullptr;
  return json{{"rule", d->rule},         {"judged", d->judged},
              {"exact", d->exact},       {"rounding", d->rounding},
              {"failed", d->failed},     {"first_rounding", StepTensorJson(d->first_rounding)},
              {"first_failure", StepTensorJson(d->first_failure)}};
}

json OutputRulesJson(const std::vector<QuantOutputRule>& rules) {
  json a = json::array();
  for (const auto& r : rules)
    a.push_back({{"output", r.output},
                 {"rule", r.rule},
                 {"source", JsonStringOrNull(r.source)},
                 {"scale", r.rule == "qdq_steps" ? JsonNumber(r.scale) : json(nullptr)},
                 {"atol", JsonNumber(r.atol)},
                 {"rtol", JsonNumber(r.rtol)},
                 {"decide_by", JsonStringOrNull(r.decide_by)},
                 {"quantile", r.decide_by == "quantile" ? JsonNumber(r.quantile) : json(nullptr)},
                 {"reference_fraction", r.reference_fraction > 0 ? JsonNumber(r.reference_fraction) : json(nullptr)},
                 {"why", r.why}});
  return a;
}

json Top1ToJson(const std::vector<Top1Agreement>& top1) {
  json a = json::array();
  for (const auto& t : top1)
    a.push_back({{"output", t.output},
                 {"samples", t.samples},
                 {"rows", t.rows},
                 {"agree", t.agree},
                 {"agreement", JsonNumber(t.agreement())},
                 {"flipped", JsonNumber(t.flipped())}});
  return a;
}

json DetectionsToJson(const std::vector<DetectionAgreement>& detections) {
  json a = json::array();
  for (const auto& d : detections)
    a.push_back({{"output", d.output},
                 {"class_axis", d.layout.class_axis},
                 {"classes", d.layout.classes},
                 {"anchors_per_sample", d.layout.anchors},
                 {"samples", d.samples},
                 {"anchors", d.anchors},
                 {"class_agree", d.class_agree},
                 {"class_agreement", JsonNumber(d.class_agreement())},
                 {"detections", d.detections},
                 {"kept", d.kept},
                 {"spurious", d.spurious},
                 {"max_score_diff", JsonNumber(d.max_score_diff)}});
  return a;
}

json QuantReportToJson(const QuantReport& r) {
  json layers = json::array();
  for (const auto& l : r.layers) layers.push_back(QuantLayerToJson(l));
  json unmatched = json::array();
  for (const auto& u : r.unmatched) unmatched.push_back({{"node", u.node}, {"op_type", u.op_type}, {"reason", u.reason}});
  return json{{"kind", r.kind},
              {"rule", r.rule},
              {"layers", std::move(layers)},
              {"worst_local", r.worst_local ? QuantLayerToJson(r.layers[*r.worst_local]) : json(nullptr)},
              {"unmatched", std::move(unmatched)},
              {"overflow", r.overflow ? json{{"node", r.overflow->node},
                                             {"op_type", r.overflow->op_type},
                                             {"tensor", r.overflow->tensor},
                                             {"float_absmax", JsonNumber(r.overflow->float_absmax)},
                                             {"nonfinite", r.overflow->nonfinite},
                                             {"reason", r.overflow->reason}}
                                      : json(nullptr)},
              {"clipped", r.clipped ? json{{"node", r.clipped->node},
                                           {"op_type", r.clipped->op_type},
                                           {"tensor", r.clipped->tensor},
                                           {"grid", r.clipped->grid},
                                           {"step", JsonNumber(r.clipped->step)},
                                           {"representable", JsonNumber(r.clipped->representable)},
                                           {"float_absmax", JsonNumber(r.clipped->float_absmax)},
                                           {"readers", r.clipped->readers},
                                           {"advice", r.clipped->Describe()}}
                                    : json(nullptr)},
              {"deployed", DeployedJson(r.deployed)},
              {"outputs", OutputRulesJson(r.outputs)},
              {"compute_layers", r.compute_layers},
              {"compute_matched", r.compute_matched},
              {"sessions", r.sessions},
              {"wall_ms", JsonNumber(r.wall_ms)}};
}

}  // namespace parity
