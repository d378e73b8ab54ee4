// WithFloatsRounded (edit.h): the reference's arithmetic with a lower
// precision's rounding emulated, for naming a target's arithmetic from
// evidence (engine/run/arithmetic.h).
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "onnx/edit.h"
#include "onnx/model_internal.h"
#include "onnx/validate.h"

namespace parity {
namespace {

// Every float32 tensor of the top-level graph: inputs, initializers and
// node outputs whose type is declared or inferred.
std::unordered_set<std::string> FloatTensors(const Model& m) {
  std::unordered_set<std::string> out;
  const auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT)
      out.insert(v.name());
  };
  const auto& g = onnx_adapter::Proto(m).graph();
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.output()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& t : g.initializer())
    if (t.data_type() == onnx::TensorProto::FLOAT) out.insert(t.name());
  if (auto inferred = InferredStructure(m))
    for (const auto& v : onnx_adapter::Proto(*inferred).graph().value_info()) add(v);
  return out;
}

// Cast `from` to `low` and back to float32 as `to`.
void AppendRounding(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& from,
                    const std::string& to, int low) {
  onnx::NodeProto* down = nodes.Add();
  down->set_op_type("Cast");
  down->set_name(to + "/Cast_down");
  down->add_input(from);
  down->add_output(to + "_low");
  auto* a = down->add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(low);
  onnx::NodeProto* up = nodes.Add();
  up->set_op_type("Cast");
  up->set_name(to + "/Cast_up");
  up->add_input(to + "_low");
  up->add_output(to);
  auto* b = up->add_attribute();
  b->set_name("to");
  b->set_type(onnx::AttributeProto::INT);
  b->set_i(onnx::TensorProto::FLOAT);
}

}  // namespace

Result<Model> WithFloatsRounded(const Model& m, DType format) {
  if (format != DType::kBFloat16 && format != DType::kFloat16)
    return InvalidArgument(fmt::format("rounding to {} is not emulated (bfloat16, float16)", DTypeName(format)));
  const int low = format == DType::kBFloat16 ? onnx::TensorProto::BFLOAT16 : onnx::TensorProto::FLOAT16;
  const std::unordered_set<std::string> floats = FloatTensors(m);
  Model out = m.Clone();
  onnx::GraphProto& g = *onnx_adapter::MutableProto(out).mutable_graph();
  std::unordered_map<std::string, std::string> rounded;  // tensor -> its rounded copy
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  const auto round = [&](const std::string& t) {
    if (t.empty() || !floats.contains(t) || rounded.contains(t)) return;
    const std::string copy = t + "__parity_rounded";
    AppendRounding(nodes, t, copy, low);
    rounded.emplace(t, copy);
  };
  for (const auto& v : g.input()) round(v.name());
  for (const auto& t : g.initializer()) round(t.name());
  for (const auto& n : g.node()) {
    onnx::NodeProto* kept = nodes.Add();
    *kept = n;
    for (auto& in : *kept->mutable_input())
      if (auto it = rounded.find(in); it != rounded.end()) in = it->second;
    for (const auto& o : n.output()) round(o);
  }
  g.mutable_node()->Swap(&nodes);
  return out;
}

}  // namespace parity
