#include "onnx/edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "onnx/external_data.h"
#include "onnx/graph.h"
#include "onnx/model_internal.h"
#include "onnx/tensor_proto_internal.h"
#include "onnx/validate.h"

namespace parity {

namespace {

// Declared and inferred types of the model's values, by name.
bool HasElemType(const onnx::TypeProto& t);

// Declared types (inputs, outputs, value_info), and inferred ones unless
// every tensor of `needed` (when given) is already declared: shape inference
// works on a copy of the model, which for a region of a large CNN costs more
// than the rest of an extraction.
std::unordered_map<std::string, onnx::TypeProto> KnownTypes(const Model& m,
                                                            const std::vector<std::string>* needed = nullptr) {
  std::unordered_map<std::string, onnx::TypeProto> types;
  const auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.has_type() && !types.contains(v.name())) types.emplace(v.name(), v.type());
  };
  const auto& g = onnx_adapter::Proto(m).graph();
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.output()) add(v);
  for (const auto& v : g.value_info()) add(v);
  if (needed != nullptr &&
      std::all_of(needed->begin(), needed->end(), [&](const std::string& t) {
        auto it = types.find(t);
        return it != types.end() && HasElemType(it->second);
      }))
    return types;
  if (auto inferred = InferredStructure(m))
    for (const auto& v : onnx_adapter::Proto(*inferred).graph().value_info()) add(v);
  return types;
}

bool HasElemType(const onnx::TypeProto& t) { return t.has_tensor_type() && t.tensor_type().elem_type() != 0; }

onnx::TensorProto* FindInitializer(onnx::GraphProto& g, const std::string& name) {
  for (auto& t : *g.mutable_initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// The outputs WithExtraOutputs adds to graph `g` of `m`, appended to `outputs`.
Status AddExtraOutputs(const Model& m, const onnx::GraphProto& g, const std::vector<std::string>& tensor_names,
                       google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& outputs) {
  std::unordered_set<std::string> produced, present;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) produced.insert(o);
  for (const auto& o : g.output()) present.insert(o.name());
  std::unordered_map<std::string, onnx::TypeProto> types;
  bool types_known = false;
  for (const auto& name : tensor_names) {
    if (name.empty() || !produced.contains(name))
      return NotFound(fmt::format("tensor '{}' is not produced by any node of the graph", name));
    if (!present.insert(name).second) continue;
    if (!types_known) {
      types = KnownTypes(m);  // shape inference only when an output is really added
      types_known = true;
    }
    auto* v = outputs.Add();
    v->set_name(name);
    if (auto it = types.find(name); it != types.end() && HasElemType(it->second))
      *v->mutable_type() = it->second;
  }
  return {};
}

}  // namespace

Result<std::string> SerializeWithExtraOutputs(const Model& m, std::string_view serialized,
                                              const std::vector<std::string>& tensor_names) {
  onnx::ModelProto patch;
  const auto& g = onnx_adapter::Proto(m).graph();
  PARITY_RETURN_IF_ERROR(AddExtraOutputs(m, g, tensor_names, *patch.mutable_graph()->mutable_output()));
  std::string out;
  out.reserve(serialized.size() + patch.ByteSizeLong());
  out.append(serialized);
  if (!patch.AppendToString(&out)) return InternalError("protobuf failed to serialize the extra outputs");
  return out;
}

Result<Model> WithExtraOutputs(const Model& m, const std::vector<std::string>& tensor_names) {
  Model out = m.Clone();
  auto& g = *onnx_adapter::MutableProto(out).mutable_graph();
  PARITY_RETURN_IF_ERROR(AddExtraOutputs(m, g, tensor_names, *g.mutable_output()));
  return out;
}

namespace {

// What a region keeps of the model: its nodes (indices into the view's
// sorted nodes, ascending) and the initializers they read.
struct RegionCut {
  std::vector<size_t> kept;
  std::unordered_set<std::string> used_initializers;
};

// Walks back from the outputs to the boundary (the region's inputs).
Result<RegionCut> CutRegion(const GraphView& view, const std::unordered_set<std::string>& initializers,
                            const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  const std::unordered_set<std::string> boundary(inputs.begin(), inputs.end());
  std::unordered_set<std::string> seen;
  RegionCut cut;
  std::vector<std::string> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    std::string t = std::move(stack.back());
    stack.pop_back();
    if (t.empty() || !seen.insert(t).second || boundary.contains(t)) continue;
    if (initializers.contains(t)) {
      cut.used_initializers.insert(t);
    } else if (auto it = view.producer.find(t); it != view.producer.end()) {
      const auto& node = view.nodes[it->second];
      cut.kept.push_back(it->second);
      stack.insert(stack.end(), node.inputs.begin(), node.inputs.end());
      stack.insert(stack.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    } else {
      return InvalidArgument(fmt::format(
          "the region is open: it needs graph input '{}', which is not among the region's inputs", t));
    }
  }
  std::sort(cut.kept.begin(), cut.kept.end());
  cut.kept.erase(std::unique(cut.kept.begin(), cut.kept.end()), cut.kept.end());
  return cut;
}

// Writes the region's graph into `og`: typed inputs, the initializers and
// nodes it keeps, the outputs and the types of the kept intermediates.
Status WriteRegionGraph(const onnx::GraphProto& g, const GraphView& view,
                        const std::unordered_set<std::string>& initializers, RegionCut cut,
                        const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                        const std::unordered_map<std::string, onnx::TypeProto>& types, onnx::GraphProto& og) {
  og.set_name(g.name().empty() ? "region" : g.name() + "_region");
  for (const auto& t : inputs) {
    if (initializers.contains(t)) {
      cut.used_initializers.insert(t);
      continue;
    }
    auto it = types.find(t);
    if (it == types.end() || !HasElemType(it->second))
      return Unsupported(fmt::format("the type of region input '{}' is unknown", t));
    auto* v = og.add_input();
    v->set_name(t);
    *v->mutable_type() = it->second;
  }
  for (const auto& init : g.initializer())
    if (cut.used_initializers.contains(init.name())) *og.add_initializer() = init;
  for (size_t i : cut.kept) *og.add_node() = g.node(static_cast<int>(view.nodes[i].file_index));
  for (const auto& t : outputs) {
    auto* v = og.add_output();
    v->set_name(t);
    if (auto it = types.find(t); it != types.end() && HasElemType(it->second))
      *v->mutable_type() = it->second;
  }
  // The types of the kept intermediates, so that a region cut from this one
  // (locate's drill-down) finds them without shape inference.
  const std::unordered_set<std::string> declared(outputs.begin(), outputs.end());
  for (size_t i : cut.kept)
    for (const auto& o : view.nodes[i].outputs)
      if (auto it = types.find(o); !o.empty() && !declared.contains(o) && it != types.end() && HasElemType(it->second)) {
        auto* v = og.add_value_info();
        v->set_name(o);
        *v->mutable_type() = it->second;
      }
  return {};
}

}  // namespace

Result<Model> ExtractRegion(const Model& m, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs) {
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(m, {.infer_shapes = false}));
  const auto& src = onnx_adapter::Proto(m);
  std::unordered_set<std::string> initializers(view.initializers.begin(), view.initializers.end());
  std::unordered_set<std::string> graph_inputs(view.inputs.begin(), view.inputs.end());
  const auto exists = [&](const std::string& t) {
    return view.producer.contains(t) || initializers.contains(t) || graph_inputs.contains(t);
  };
  for (const auto& t : inputs)
    if (!exists(t)) return NotFound(fmt::format("region input '{}' is not a tensor of the model", t));
  for (const auto& t : outputs)
    if (!exists(t)) return NotFound(fmt::format("region output '{}' is not a tensor of the model", t));
  if (outputs.empty()) return InvalidArgument("a region needs at least one output");
  PARITY_ASSIGN_OR_RETURN(RegionCut cut, CutRegion(view, initializers, inputs, outputs));

  std::vector<std::string> needed;
  for (const auto& t : inputs)
    if (!initializers.contains(t)) needed.push_back(t);
  needed.insert(needed.end(), outputs.begin(), outputs.end());
  const auto types = KnownTypes(m, &needed);
  onnx::ModelProto out;
  out.set_ir_version(src.ir_version());
  *out.mutable_opset_import() = src.opset_import();
  *out.mutable_functions() = src.functions();
  out.set_producer_name("parity");
  out.set_producer_version("region");
  PARITY_RETURN_IF_ERROR(WriteRegionGraph(src.graph(), view, initializers, std::move(cut), inputs, outputs, types,
                                          *out.mutable_graph()));
  Model region = onnx_adapter::FromProto(std::move(out));
  onnx_adapter::InheritExternalData(region, m);  // its initializers still read m's files
  return region;
}

Result<Tensor> ReadInitializer(const Model& m, const std::string& name) {
  for (const auto& t : onnx_adapter::Proto(m).graph().initializer())
    if (t.name() == name) {
      if (t.data_location() != onnx::TensorProto::EXTERNAL) return onnx_adapter::TensorFromProto(t);
      // Still external (read in place): through the one bounded reader.
      onnx::TensorProto inlined = t;
      PARITY_ASSIGN_OR_RETURN(std::string bytes, onnx_adapter::ReadExternalTensor(t, m.external_data_dir()));
      inlined.set_raw_data(std::move(bytes));
      inlined.clear_external_data();
      inlined.clear_data_location();
      return onnx_adapter::TensorFromProto(inlined);
    }
  return NotFound(fmt::format("no initializer named '{}'", name));
}

Result<Model> ReplaceInitializer(const Model& m, const std::string& name, const Tensor& value) {
  Model out = m.Clone();
  auto* t = FindInitializer(*onnx_adapter::MutableProto(out).mutable_graph(), name);
  if (!t) return NotFound(fmt::format("no initializer named '{}'", name));
  *t = onnx_adapter::TensorToProto(name, value);
  // A graph input of the same name (IR < 4 style) must keep a matching type.
  for (auto& v : *onnx_adapter::MutableProto(out).mutable_graph()->mutable_input()) {
    if (v.name() != name) continue;
    auto* tt = v.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(DTypeToOnnx(value.dtype()));
    tt->clear_shape();
    for (int64_t d : value.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return out;
}

Result<Model> ScaleInitializer(const Model& m, const std::string& name, double factor) {
  PARITY_ASSIGN_OR_RETURN(Tensor t, ReadInitializer(m, name));
  Tensor scaled(t.dtype(), t.shape());
  const int64_t n = t.size();
  switch (t.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i)
        scaled.mutable_view<float>()[i] = static_cast<float>(t.view<float>()[i] * factor);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) scaled.mutable_view<double>()[i] = t.view<double>()[i] * factor;
      break;
    case DType::kFloat16:
      for (int64_t i = 0; i < n; ++i)
        scaled.mutable_view<uint16_t>()[i] = FloatToHalf(static_cast<float>(t.GetAsDouble(i) * factor));
      break;
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i)
        scaled.mutable_view<uint16_t>()[i] = FloatToBFloat16(static_cast<float>(t.GetAsDouble(i) * factor));
      break;
    default:
      return Unsupported(
          fmt::format("initializer '{}' is {}, not floating point", name, DTypeName(t.dtype())));
  }
  return ReplaceInitializer(m, name, scaled);
}

Result<Model> ReplaceNodeOp(const Model& m, const std::string& node_name, const std::string& new_op_type,
                            const std::string& new_domain) {
  const auto names = NodeNames(m);
  auto it = std::find(names.begin(), names.end(), node_name);
  if (it == names.end()) return NotFound(fmt::format("no node named '{}'", node_name));
  Model out = m.Clone();
  auto* n =
      onnx_adapter::MutableProto(out).mutable_graph()->mutable_node(static_cast<int>(it - names.begin()));
  n->set_op_type(new_op_type);
  n->set_domain(new_domain);
  return out;
}

bool HasNodeNames(const Model& m) {
  const auto names = NodeNames(m);
  const auto& g = onnx_adapter::Proto(m).graph();
  for (int i = 0; i < g.node_size(); ++i)
    if (g.node(i).name() != names[i]) return false;
  return true;
}

Model WithNodeNames(const Model& m) {
  const auto names = NodeNames(m);
  Model out = m.Clone();
  auto& g = *onnx_adapter::MutableProto(out).mutable_graph();
  for (int i = 0; i < g.node_size(); ++i) g.mutable_node(i)->set_name(names[i]);
  return out;
}

}  // namespace parity
