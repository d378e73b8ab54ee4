// TEST-ONLY: tiny ONNX models built by hand as serialized ModelProto bytes,
// for the tests of src/ort/ (which may not depend on parity's own builder).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace parity::ort::testing {

// A dimension: a fixed size (>= 0) or, with a name, a symbolic one.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  Dim(int64_t v) : value(v) {}       // NOLINT: implicit for brevity in tests
  Dim(const char* s) : symbol(s) {}  // NOLINT
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("parity-ort-test");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  ModelBuilder& Input(const std::string& name, int elem_type, const std::vector<Dim>& dims) {
    FillValueInfo(model_.mutable_graph()->add_input(), name, elem_type, &dims);
    return *this;
  }
  // An input whose type carries no shape at all.
  ModelBuilder& InputWithoutShape(const std::string& name, int elem_type) {
    FillValueInfo(model_.mutable_graph()->add_input(), name, elem_type, nullptr);
    return *this;
  }
  ModelBuilder& Output(const std::string& name, int elem_type) {
    FillValueInfo(model_.mutable_graph()->add_output(), name, elem_type, nullptr);
    return *this;
  }
  ModelBuilder& FloatInit(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& data) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : data) t->add_float_data(v);
    return *this;
  }
  ModelBuilder& Int64Init(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& data) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : data) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  static void FillValueInfo(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                            const std::vector<Dim>* dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    if (dims == nullptr) return;
    auto* shape = tt->mutable_shape();
    for (const Dim& d : *dims) {
      auto* dim = shape->add_dim();
      if (d.value >= 0) {
        dim->set_dim_value(d.value);
      } else if (!d.symbol.empty()) {
        dim->set_dim_param(d.symbol);
      }
    }
  }

  onnx::ModelProto model_;
};

inline void SetIntAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// y = Relu(Conv(x[1,2,5,5], w[4,2,3,3]) + b): ConvActivationFusion's pattern.
inline std::string ConvReluModel() {
  std::vector<float> w(72);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i) - 0.3f;
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {1, 2, 5, 5})
      .FloatInit("w", {4, 2, 3, 3}, w)
      .FloatInit("b", {4}, {0.1f, -0.2f, 0.3f, -0.4f})
      .Output("y", onnx::TensorProto::FLOAT);
  m.Node("Conv", "conv", {"x", "w", "b"}, {"c"});
  m.Node("Relu", "relu", {"c"}, {"y"});
  return m.Bytes();
}

// y = MatMul(x[batch,4], w[4,3]) + b[3]: MatMulAddFusion makes a Gemm.
inline std::string MatMulAddModel() {
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f - 0.1f * static_cast<float>(i);
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {"batch", 4})
      .FloatInit("w", {4, 3}, w)
      .FloatInit("b", {3}, {1.0f, 2.0f, 3.0f})
      .Output("y", onnx::TensorProto::FLOAT);
  m.Node("MatMul", "matmul", {"x", "w"}, {"mm"});
  m.Node("Add", "add", {"mm", "b"}, {"y"});
  return m.Bytes();
}

// sum = a + b over float32 [batch, 3]; also relu = Relu(a).
inline std::string AddModel() {
  ModelBuilder m;
  m.Input("a", onnx::TensorProto::FLOAT, {"batch", 3})
      .Input("b", onnx::TensorProto::FLOAT, {"batch", 3})
      .Output("sum", onnx::TensorProto::FLOAT)
      .Output("relu", onnx::TensorProto::FLOAT);
  m.Node("Add", "add", {"a", "b"}, {"sum"});
  m.Node("Relu", "relu", {"a"}, {"relu"});
  return m.Bytes();
}

// y = Identity(x) for one element type and a dynamic 1-d shape.
inline std::string IdentityModel(int elem_type) {
  ModelBuilder m;
  m.Input("x", elem_type, {"n"}).Output("y", elem_type);
  m.Node("Identity", "identity", {"x"}, {"y"});
  return m.Bytes();
}

}  // namespace parity::ort::testing
