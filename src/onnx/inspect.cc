#include "onnx/inspect.h"

#include <limits>
#include <unordered_set>

#include "core/dtype.h"
#include "core/tensor.h"
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
  if (!dtype) return 0;
  // The dims are untrusted: a negative or overflowing shape counts as no
  // bytes here (the checker reports it), never as undefined arithmetic.
  const auto count = ElementCount(Shape(t.dims().begin(), t.dims().end()), int64_t{1} << 56);
  return count ? *count * static_cast<int64_t>(DTypeSize(*dtype)) : 0;
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
    if (__builtin_add_overflow(info.initializer_bytes, TensorBytes(t), &info.initializer_bytes))
      info.initializer_bytes = std::numeric_limits<int64_t>::max();
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
