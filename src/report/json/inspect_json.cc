#include "report/json/inspect_json.h"

namespace parity {
namespace {

nlohmann::json TypeToJson(const TensorType& t) {
  nlohmann::json dims = nlohmann::json::array();
  for (const Dim& d : t.dims) {
    if (d.kind == Dim::Kind::kKnown)
      dims.push_back(d.value);
    else if (d.kind == Dim::Kind::kSymbolic)
      dims.push_back(d.symbol);
    else
      dims.push_back(nullptr);
  }
  return {{"dtype", t.dtype_name}, {"shape", t.has_shape ? dims : nlohmann::json(nullptr)}};
}

nlohmann::json ValuesToJson(const std::vector<ValueInfo>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : values) {
    nlohmann::json j = TypeToJson(v.type);
    j["name"] = v.name;
    out.push_back(std::move(j));
  }
  return out;
}

std::string OpName(const OpCount& op) { return op.domain.empty() ? op.op_type : op.domain + "." + op.op_type; }

}  // namespace

nlohmann::json ModelInfoToJson(const ModelInfo& info) {
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& [domain, version] : info.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& op : info.op_counts) ops[OpName(op)] = op.count;
  return {{"ir_version", info.ir_version},
          {"opsets", opsets},
          {"producer", {{"name", info.producer_name}, {"version", info.producer_version}}},
          {"graph_name", info.graph_name},
          {"inputs", ValuesToJson(info.inputs)},
          {"outputs", ValuesToJson(info.outputs)},
          {"op_counts", ops},
          {"node_count", info.node_count},
          {"initializer_count", info.initializer_count},
          {"initializer_bytes", info.initializer_bytes}};
}

nlohmann::json FindingsToJson(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings)
    out.push_back({{"severity", SeverityName(f.severity)}, {"stage", f.stage}, {"message", f.message}});
  return out;
}

nlohmann::json ScopeSummaryToJson(const ScopeSummary& s) {
  nlohmann::json modules = nlohmann::json::array();
  for (const auto& [module, n] : s.modules) modules.push_back({{"module", module}, {"nodes", n}});
  return {{"source", ScopeSourceName(s.source)}, {"nodes", s.nodes}, {"scoped_nodes", s.scoped},
          {"modules", std::move(modules)}};
}

nlohmann::json InspectReportToJson(const std::string& model_path, const ModelInfo& info,
                                   const std::vector<Finding>& findings, const std::string& checker,
                                   const ScopeSummary* scopes) {
  return {{"schema", "parity.inspect/1"},
          {"model", model_path},
          {"info", ModelInfoToJson(info)},
          {"checker", checker},
          {"findings", FindingsToJson(findings)},
          {"scopes", scopes ? ScopeSummaryToJson(*scopes) : nlohmann::json(nullptr)}};
}

}  // namespace parity
