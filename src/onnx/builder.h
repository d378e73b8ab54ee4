// A small C++ model builder, so tests and the demo need no Python.
//
//   ModelBuilder b(/*opset=*/17);
//   auto x = b.Input("x", DType::kFloat32, {1, 3, 32, 32});
//   {
//     auto scope = b.Scope("layer1/conv1");          // nodes "/layer1/conv1/Conv", ...
//     x = b.ConvLayer(x, 3, 8, /*kernel=*/3, /*stride=*/1, /*pad=*/1);
//   }
//   b.Output(b.Relu(x), "y");
//   Result<Model> m = b.Build();
//
// Tensors are named by strings. Node names follow the PyTorch exporter's
// style ("/layer1/conv1/Conv", repeats get "_1", "_2"), node outputs are
// "<node name>_output_<i>", weights "<scope with dots>.<leaf>"
// ("layer1.conv1.weight"). Weights come from a seeded std::mt19937, so a
// builder with the same seed and calls makes the same model.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"
#include "onnx/tensor_type.h"

namespace parity {

struct Attr {
  std::string name;
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor> value;
};

struct ConvAttrs {
  std::vector<int64_t> pads;  // empty: zeros
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  int64_t group = 1;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17, uint32_t seed = 42);
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  int opset() const { return opset_; }

  // Scopes nest; the guard pops on destruction. `path` has no leading slash.
  class ScopeGuard {
   public:
    explicit ScopeGuard(ModelBuilder* b) : b_(b) {}
    ScopeGuard(ScopeGuard&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
    ~ScopeGuard() {
      if (b_) b_->PopScope();
    }

   private:
    ModelBuilder* b_;
  };
  [[nodiscard]] ScopeGuard Scope(const std::string& path);
  void PushScope(const std::string& path);
  void PopScope();

  // Graph inputs. Negative dims in the first form become symbolic ("N<i>").
  std::string Input(const std::string& name, DType dtype, const Shape& dims);
  std::string Input(const std::string& name, DType dtype, const std::vector<Dim>& dims);
  // Marks `tensor` as a graph output, renaming it to `name` when given (the
  // tensor must then be a node output). Types come from shape inference at Build.
  void Output(const std::string& tensor, const std::string& name = "");

  // Initializers. `name` is used as given (made unique if taken).
  std::string Initializer(const std::string& name, const Tensor& value);
  // A weight named "<scope>.<leaf>", normal(0, stddev).
  std::string RandomWeight(const std::string& leaf, const Shape& shape, float stddev);
  // Kaiming-normal weight: stddev sqrt(2 / fan_in).
  std::string KaimingWeight(const std::string& leaf, const Shape& shape, int64_t fan_in);
  // A float32 initializer "<scope>.<leaf>" filled with `value`.
  std::string ConstWeight(const std::string& leaf, const Shape& shape, float value);
  // A 0-d float32 initializer.
  std::string Scalar(const std::string& leaf, float value);
  // A 1-d int64 initializer.
  std::string Int64s(const std::string& leaf, const std::vector<int64_t>& values);

  // Any node; returns its outputs.
  std::vector<std::string> Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                const std::vector<Attr>& attrs = {}, int num_outputs = 1,
                                const std::string& domain = "");
  std::string Op(const std::string& op_type, const std::vector<std::string>& inputs,
                 const std::vector<Attr>& attrs = {});

  // ONNX operators (opset-aware where the signature changed).
  std::string Conv(const std::string& x, const std::string& w, const std::string& b, const ConvAttrs& a = {});
  std::string BatchNormalization(const std::string& x, const std::string& scale, const std::string& bias,
                                 const std::string& mean, const std::string& var, float epsilon = 1e-5f);
  std::string Relu(const std::string& x) { return Op("Relu", {x}); }
  std::string Sigmoid(const std::string& x) { return Op("Sigmoid", {x}); }
  std::string Tanh(const std::string& x) { return Op("Tanh", {x}); }
  std::string Sqrt(const std::string& x) { return Op("Sqrt", {x}); }
  std::string Erf(const std::string& x) { return Op("Erf", {x}); }
  std::string Log(const std::string& x) { return Op("Log", {x}); }
  std::string Identity(const std::string& x) { return Op("Identity", {x}); }
  std::string Add(const std::string& a, const std::string& b) { return Op("Add", {a, b}); }
  std::string Sub(const std::string& a, const std::string& b) { return Op("Sub", {a, b}); }
  std::string Mul(const std::string& a, const std::string& b) { return Op("Mul", {a, b}); }
  std::string Div(const std::string& a, const std::string& b) { return Op("Div", {a, b}); }
  std::string Pow(const std::string& a, const std::string& b) { return Op("Pow", {a, b}); }
  std::string MatMul(const std::string& a, const std::string& b) { return Op("MatMul", {a, b}); }
  std::string Gemm(const std::string& a, const std::string& b, const std::string& c, bool trans_b = true,
                   float alpha = 1.0f, float beta = 1.0f);
  std::string ReduceMean(const std::string& x, const std::vector<int64_t>& axes, bool keepdims = true);
  std::string Softmax(const std::string& x, int64_t axis = -1);
  std::string Transpose(const std::string& x, const std::vector<int64_t>& perm);
  std::string Reshape(const std::string& x, const std::vector<int64_t>& shape);
  std::string Concat(const std::vector<std::string>& xs, int64_t axis);
  // Nearest-neighbour resize by per-axis scales.
  std::string Resize(const std::string& x, const std::vector<float>& scales);
  std::string MaxPool(const std::string& x, const std::vector<int64_t>& kernel,
                      const std::vector<int64_t>& strides, const std::vector<int64_t>& pads = {});
  std::string GlobalAveragePool(const std::string& x) { return Op("GlobalAveragePool", {x}); }
  std::string Flatten(const std::string& x, int64_t axis = 1);
  std::string Constant(const Tensor& value);

  // Layers with their own weights, in the current scope.
  std::string ConvLayer(const std::string& x, int64_t in_channels, int64_t out_channels, int64_t kernel,
                        int64_t stride = 1, int64_t pad = 0, bool bias = true);
  std::string BatchNormLayer(const std::string& x, int64_t channels);
  std::string GemmLayer(const std::string& x, int64_t in_features, int64_t out_features);
  // MatMul by a [in, out] weight, then Add a bias (the exporter's nn.Linear on 3-d input).
  std::string LinearLayer(const std::string& x, int64_t in_features, int64_t out_features);

  // Decomposed patterns, as exporters emit them and ORT's fusions recognise them.
  // LayerNorm over the last axis: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add.
  std::string LayerNorm(const std::string& x, int64_t channels, float epsilon = 1e-5f);
  // Gelu (erf form): Div by sqrt(2), Erf, Add 1, Mul by x, Mul by 0.5.
  std::string Gelu(const std::string& x);
  // SiLU: x * Sigmoid(x).
  std::string SiLU(const std::string& x);

  // Assembles the model: IR version to match the opset, output types from
  // ONNX shape inference. Errors (kInternal) when an output's type cannot be
  // inferred or a tensor is undefined: a bug in the calling code.
  Result<Model> Build(const std::string& graph_name = "parity_model");

 private:
  struct Impl;
  // mean + stddev * N(0, 1) per element, from the builder's RNG.
  Tensor RandomTensor(const Shape& shape, float mean, float stddev);
  std::string ParamName(const std::string& leaf);
  std::string UniqueTensorName(const std::string& base);

  int opset_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity
