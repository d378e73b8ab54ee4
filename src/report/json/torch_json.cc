#include "report/json/torch_json.h"

#include "engine/run/environment.h"
#include "engine/run/environment_json.h"
#include "report/json/compare_json.h"
#include "report/json/json_helpers.h"
#include "report/locate_report.h"

namespace parity {
using nlohmann::json;

namespace {

// One `alignment` entry (docs/align.md, "JSON").
json LayerToJson(const LayerVerdict& v) {
  const LayerAlignment& a = v.alignment;
  json e = {{"module", a.module},
            {"file", a.file},
            {"type", a.type},
            {"call", a.call},
            {"output_index", a.output_index ? json(*a.output_index) : json(nullptr)},
            {"leaf", a.leaf},
            {"tensor", JsonStringOrNull(a.tensor)},
            {"node", JsonStringOrNull(a.node)},
            {"op_type", JsonStringOrNull(a.op_type)},
            {"how", AlignHowName(a.how)},
            {"folded", a.folded},
            {"status", VerdictName(v.status)}};
  if (!a.reason.empty()) e["reason"] = a.reason;
  if (v.status == Verdict::kUnchecked && a.expected) e["expected"] = true;
  if (v.status == Verdict::kUnchecked && a.refused) {
    e["refused"] = true;
    e["nearest"] = a.nearest;
  }
  if (v.status != Verdict::kUnchecked) {
    e["metrics"] = MetricsToJson(v.metrics);
    e["atol"] = v.tolerance.tolerance.atol;
    e["rtol"] = v.tolerance.tolerance.rtol;
    if (!v.reason.empty()) e[v.status == Verdict::kFail ? "failure" : "excursion"] = v.reason;
  }
  if (!v.note.empty()) e["note"] = v.note;
  return e;
}

// `module_paths` and `unchecked_expected`.
void AddCoverage(const TorchComparison& c, json& result) {
  result["module_paths"] = {{"strip", c.paths.strip},
                            {"add", c.paths.add},
                            {"dumped_modules", c.paths.dumped},
                            {"in_export", c.paths.in_export},
                            {"as_dumped", c.paths.as_is},
                            {"message", c.paths.Describe()}};
  json expected = json::array();
  for (size_t k : c.UncheckedExpected()) {
    const LayerAlignment& a = c.layers[k].alignment;
    expected.push_back({{"module", a.module}, {"call", a.call}, {"refused", a.refused}, {"reason", a.reason}});
  }
  result["unchecked_expected"] = std::move(expected);
}

}  // namespace

json TorchComparisonToJson(const TorchComparison& c) {
  json layers = json::array();
  for (const LayerVerdict& v : c.layers) layers.push_back(LayerToJson(v));
  json first = nullptr;
  if (c.first_divergence) {
    const LayerVerdict& v = c.layers[*c.first_divergence];
    first = {
        {"module", v.alignment.module},         {"call", v.alignment.call}, {"file", v.alignment.file},
        {"type", v.alignment.type},
        {"tensor", v.alignment.tensor},         {"node", v.alignment.node}, {"op_type", v.alignment.op_type},
        {"max_abs", JsonNumber(v.metrics.max_abs)}, {"reason", v.reason}};
    if (c.divergent_op) {
      const DivergentOp& op = *c.divergent_op;
      first["module"] = op.module;
      first["op"] = {{"tensor", op.tensor}, {"node", op.node}, {"op_type", op.op_type}, {"feeds", op.feeds},
                     {"max_abs", JsonNumber(op.max_abs)}};
      first["reason"] = c.VerdictLine();
    }
  }
  json outputs = json::array();
  for (const auto& t : c.outputs.tensors)
    outputs.push_back({{"name", t.name},
                       {"status", VerdictName(t.status)},
                       {"max_abs", JsonNumber(t.metrics.max_abs)},
                       {"reason", t.reason}});
  for (const auto& f : c.outputs.findings)
    outputs.push_back(
        {{"name", f.name}, {"status", "fail"}, {"reason", std::string(FindingKindName(f.kind))}});
  json result = {{"model", c.model_label},
          {"dump", c.dump_dir},
          {"alignment", std::move(layers)},
          {"first_divergence", std::move(first)},
          {"summary",
           {{"layers", c.layers.size()},
            {"aligned_by_scope", c.Count(AlignHow::kScope)},
            {"aligned_by_name", c.Count(AlignHow::kName)},
            {"aligned_by_value", c.Count(AlignHow::kValue)},
            {"unaligned", c.Count(AlignHow::kNone)},
            {"folded", c.Folded()},
            {"leaves_aligned", c.AlignedLeaves()},
            {"leaves_by_structure", c.StructuralLeaves()},
            {"pass", c.Count(Verdict::kPass)},
            {"fail", c.Count(Verdict::kFail)},
            {"unchecked", c.Count(Verdict::kUnchecked)},
            {"unchecked_expected", c.UncheckedExpected().size()},
            {"refused", c.Refused().size()}}},
          {"outputs", std::move(outputs)},
          {"passed", c.passed()}};
  AddCoverage(c, result);
  result["verdict"] = c.VerdictLine();
  if (c.unexplained)
    result["unexplained"] = {{"after_module", JsonStringOrNull(c.unexplained->after_module)},
                             {"unchecked_modules", c.unexplained->unchecked_modules},
                             {"failing_outputs", c.unexplained->failing_outputs},
                             {"message", c.unexplained->Describe()}};
  return result;
}

nlohmann::json AlignReportToJson(const TorchComparison& c, const RunConfig& config) {
  // One ORT per process (ort/ort_library.h): the one loaded is the one that ran.
  nlohmann::json report = {
      {"schema", "parity.align/1"}, {"ort", OrtToJson(CurrentOrt())}, {"config", RunConfigToJson(config)}};
  report.update(TorchComparisonToJson(c));
  return report;
}

nlohmann::json TorchLocateResultToJson(const TorchLocateResult& r, const std::string& dump_dir,
                                       const LocateOptions& options) {
  nlohmann::json exported = TorchComparisonToJson(r.exported);
  nlohmann::json j = {{"schema", "parity.locate_torch/1"},
                      {"ort", OrtToJson(CurrentOrt())},
                      {"reference", "torch:" + dump_dir},
                      {"reference_kind", ReferenceKindName(Reference::Kind::kTorchDump)},
                      {"export_config", RunConfigToJson(options.reference)},
                      {"target", RunConfigToJson(options.target)},
                      {"model", options.model_label},
                      {"passed", r.passed()},
                      {"alignment", exported["alignment"]},
                      {"alignment_summary", exported["summary"]},
                      {"first_divergence", exported["first_divergence"]},
                      {"deployed_outputs", SetComparisonToJson(r.deployed)}};
  if (!options.target_label.empty()) j["target_model"] = options.target_label;
  if (exported.contains("unexplained")) j["unexplained"] = exported["unexplained"];
  j["module_paths"] = exported["module_paths"];
  j["unchecked_expected"] = exported["unchecked_expected"];
  if (r.fusion) {
    // The export matches PyTorch: the divergence comes from the deployed
    // config, localized fused node by fused node against the unfused run.
    j["fusion"] = LocateReportToJson(*r.fusion);
    j["first_divergence"] = j["fusion"]["first_divergence"];
    j["culprits"] = j["fusion"]["culprits"];
    j["observer_check"] = j["fusion"]["observer_check"];
  }
  return j;
}

}  // namespace parity
