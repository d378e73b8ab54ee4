#include "onnx/inspect.h"

#include <unordered_set>

#include "core/dtype.h"
#include "onnx/model_internal.h"
#include "onnx/tensor_type_internal.h"

namespace parity {

int64_t ModelInfo::default_opset() const {
  auto it = opsets.find("");
  return it == opsets.end() ? 0 : it->second;
}

namespace {

int64_t TensorBytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return static_cast<int64_t>(t.raw_data().size());
  if (t.data_type() == onnx::TensorProto::STRING) {
    int64_t n = 0;
    for (const auto& s : t.string_data()) n += static_cast<int64_t>(s.size());
    return n;
  }
  const auto dtype = DTypeFromOnnx(t.data_type());
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d < 0 ? 0 : d;
  return dtype ? count * static_cast<int64_t>(DTypeSize(*dtype)) : 0;
}

}  // namespace

ModelInfo Inspect(const Model& m) {
  const auto& p = onnx_adapter::Proto(m);
  const auto& g = p.graph();
  ModelInfo info;
  info.ir_version = p.ir_version();
  for (const auto& o : p.opset_import())
    info.opsets[o.domain() == "ai.onnx" ? std::string() : o.domain()] = o.version();
  info.producer_name = p.producer_name();
  info.producer_version = p.producer_version();
  info.graph_name = g.name();

  std::unordered_set<std::string> init_names;
  for (const auto& t : g.initializer()) {
    init_names.insert(t.name());
    info.initializer_bytes += TensorBytes(t);
  }
  info.initializer_count = g.initializer_size();
  for (const auto& v : g.input())
    if (!init_names.contains(v.name()))
      info.inputs.push_back({v.name(), onnx_adapter::TensorTypeFromProto(v.type())});
  for (const auto& v : g.output())
    info.outputs.push_back({v.name(), onnx_adapter::TensorTypeFromProto(v.type())});

  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (const auto& n : g.node()) {
    ++counts[{n.domain() == "ai.onnx" ? std::string() : n.domain(), n.op_type()}];
  }
  info.node_count = g.node_size();
  for (const auto& [key, n] : counts) info.op_counts.push_back({key.first, key.second, n});
  return info;
}

}  // namespace parity
