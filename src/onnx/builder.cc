// ModelBuilder's core: scopes, naming, inputs/outputs, initializers, generic
// nodes and Build. The operator wrappers are in builder_ops.cc.
#include "onnx/builder.h"

#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "onnx/builder_impl.h"
#include "onnx/model_internal.h"
#include "onnx/tensor_proto_internal.h"

namespace parity {

namespace {

int64_t IrVersionForOpset(int opset) {
  if (opset <= 15) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  return 11;
}

void SetAttr(onnx::AttributeProto& a, const Attr& attr) {
  a.set_name(attr.name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a.set_type(onnx::AttributeProto::INT);
          a.set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a.set_type(onnx::AttributeProto::FLOAT);
          a.set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a.set_type(onnx::AttributeProto::STRING);
          a.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a.set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a.set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) a.add_floats(x);
        } else {
          a.set_type(onnx::AttributeProto::TENSOR);
          *a.mutable_t() = onnx_adapter::TensorToProto("", v);
        }
      },
      attr.value);
}

}  // namespace

ModelBuilder::ModelBuilder(int opset, uint32_t seed) : opset_(opset), impl_(std::make_unique<Impl>()) {
  impl_->rng.seed(seed);
}
ModelBuilder::~ModelBuilder() = default;

ModelBuilder::ScopeGuard ModelBuilder::Scope(const std::string& path) {
  PushScope(path);
  return ScopeGuard(this);
}
void ModelBuilder::PushScope(const std::string& path) { impl_->scopes.push_back(path); }
void ModelBuilder::PopScope() {
  if (!impl_->scopes.empty()) impl_->scopes.pop_back();
}

std::string ModelBuilder::UniqueTensorName(const std::string& base) {
  std::string name = base;
  for (int k = 1; impl_->tensor_names.contains(name); ++k) name = fmt::format("{}_{}", base, k);
  impl_->tensor_names.insert(name);
  return name;
}

std::string ModelBuilder::ParamName(const std::string& leaf) {
  std::string prefix;
  for (const auto& s : impl_->scopes) {
    for (char c : s) prefix += c == '/' ? '.' : c;
    prefix += '.';
  }
  return UniqueTensorName(prefix + leaf);
}

std::string ModelBuilder::Input(const std::string& name, DType dtype, const Shape& dims) {
  std::vector<Dim> d;
  for (size_t i = 0; i < dims.size(); ++i)
    d.push_back(dims[i] < 0 ? Dim::Symbolic(fmt::format("N{}", i)) : Dim::Known(dims[i]));
  return Input(name, dtype, d);
}

std::string ModelBuilder::Input(const std::string& name, DType dtype, const std::vector<Dim>& dims) {
  const std::string n = UniqueTensorName(name);
  auto* v = impl_->graph.add_input();
  v->set_name(n);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* sd = shape->add_dim();
    if (d.kind == Dim::Kind::kKnown) sd->set_dim_value(d.value);
    if (d.kind == Dim::Kind::kSymbolic) sd->set_dim_param(d.symbol);
  }
  return n;
}

void ModelBuilder::Output(const std::string& tensor, const std::string& name) {
  if (name.empty() || name == tensor) {
    impl_->outputs.push_back(tensor);
    return;
  }
  bool renamed = false;
  for (auto& n : *impl_->graph.mutable_node()) {
    for (auto& o : *n.mutable_output())
      if (o == tensor) {
        o = name;
        renamed = true;
      }
    for (auto& i : *n.mutable_input())
      if (i == tensor) i = name;
  }
  if (!renamed) {  // a graph input or initializer: copy it under the new name
    auto* n = impl_->graph.add_node();
    n->set_op_type("Identity");
    n->set_name(fmt::format("/{}/Identity", name));
    n->add_input(tensor);
    n->add_output(name);
  }
  for (auto& o : impl_->outputs)
    if (o == tensor) o = name;
  impl_->tensor_names.insert(name);
  impl_->outputs.push_back(name);
}

std::string ModelBuilder::Initializer(const std::string& name, const Tensor& value) {
  const std::string n = UniqueTensorName(name);
  *impl_->graph.add_initializer() = onnx_adapter::TensorToProto(n, value);
  return n;
}

Tensor ModelBuilder::RandomTensor(const Shape& shape, float mean, float stddev) {
  Tensor t(DType::kFloat32, shape);
  std::normal_distribution<float> dist(mean, stddev);
  for (float& v : t.mutable_view<float>()) v = dist(impl_->rng);
  return t;
}

std::string ModelBuilder::RandomWeight(const std::string& leaf, const Shape& shape, float stddev) {
  const std::string n = ParamName(leaf);
  *impl_->graph.add_initializer() = onnx_adapter::TensorToProto(n, RandomTensor(shape, 0.0f, stddev));
  return n;
}

std::string ModelBuilder::KaimingWeight(const std::string& leaf, const Shape& shape, int64_t fan_in) {
  return RandomWeight(leaf, shape, std::sqrt(2.0f / static_cast<float>(fan_in)));
}

std::string ModelBuilder::ConstWeight(const std::string& leaf, const Shape& shape, float value) {
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.mutable_view<float>()) v = value;
  const std::string n = ParamName(leaf);
  *impl_->graph.add_initializer() = onnx_adapter::TensorToProto(n, t);
  return n;
}

std::string ModelBuilder::Scalar(const std::string& leaf, float value) {
  const std::string n = ParamName(leaf);
  *impl_->graph.add_initializer() =
      onnx_adapter::TensorToProto(n, Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{value}));
  return n;
}

std::string ModelBuilder::Int64s(const std::string& leaf, const std::vector<int64_t>& values) {
  const std::string n = ParamName(leaf);
  *impl_->graph.add_initializer() = onnx_adapter::TensorToProto(
      n, Tensor::FromVector(DType::kInt64, {static_cast<int64_t>(values.size())}, values));
  return n;
}

std::vector<std::string> ModelBuilder::Node(const std::string& op_type,
                                            const std::vector<std::string>& inputs,
                                            const std::vector<Attr>& attrs, int num_outputs,
                                            const std::string& domain) {
  std::string base;
  for (const auto& s : impl_->scopes) base += "/" + s;
  base += "/" + op_type;
  std::string name = base;
  for (int k = 1; impl_->node_names.contains(name); ++k) name = fmt::format("{}_{}", base, k);
  impl_->node_names.insert(name);

  auto* n = impl_->graph.add_node();
  n->set_name(name);
  n->set_op_type(op_type);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i) {
    outs.push_back(UniqueTensorName(fmt::format("{}_output_{}", name, i)));
    n->add_output(outs.back());
  }
  for (const auto& a : attrs) SetAttr(*n->add_attribute(), a);
  return outs;
}

std::string ModelBuilder::Op(const std::string& op_type, const std::vector<std::string>& inputs,
                             const std::vector<Attr>& attrs) {
  return Node(op_type, inputs, attrs, 1).front();
}

Result<Model> ModelBuilder::Build(const std::string& graph_name) {
  onnx::ModelProto p;
  p.set_ir_version(IrVersionForOpset(opset_));
  p.set_producer_name("parity-builder");
  p.set_producer_version("1");
  auto* op = p.add_opset_import();
  op->set_domain("");
  op->set_version(opset_);
  *p.mutable_graph() = impl_->graph;
  p.mutable_graph()->set_name(graph_name);
  PARITY_RETURN_IF_ERROR(WithContext(onnx_adapter::CheckReferences(p.graph()), "ModelBuilder (a bug)"));

  // Output types from shape inference on a copy (the model keeps no value_info,
  // like an exporter's output).
  onnx::ModelProto inferred = p;
  for (const auto& name : impl_->outputs) inferred.mutable_graph()->add_output()->set_name(name);
  try {
    onnx::ShapeInferenceOptions options(true, 1, true);
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return InternalError(fmt::format("ModelBuilder: shape inference failed (a bug): {}", e.what()));
  }
  std::unordered_map<std::string, const onnx::ValueInfoProto*> types;
  for (const auto& v : inferred.graph().value_info()) types[v.name()] = &v;
  for (const auto& v : inferred.graph().output())
    if (v.has_type()) types[v.name()] = &v;  // inference fills existing outputs in place
  for (const auto& name : impl_->outputs) {
    auto it = types.find(name);
    if (it == types.end() || !it->second->type().has_tensor_type())
      return InternalError(fmt::format("ModelBuilder: no inferred type for output '{}' (a bug)", name));
    *p.mutable_graph()->add_output() = *it->second;
  }
  return onnx_adapter::FromProto(std::move(p));
}

}  // namespace parity
