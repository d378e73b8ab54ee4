// ModelBuilder's operator wrappers, weighted layers and decomposed patterns.
#include <cmath>

#include "onnx/builder.h"

namespace parity {

std::string ModelBuilder::Conv(const std::string& x, const std::string& w, const std::string& b,
                               const ConvAttrs& a) {
  std::vector<Attr> attrs;
  if (!a.pads.empty()) attrs.push_back({"pads", a.pads});
  if (!a.strides.empty()) attrs.push_back({"strides", a.strides});
  if (!a.dilations.empty()) attrs.push_back({"dilations", a.dilations});
  if (a.group != 1) attrs.push_back({"group", a.group});
  std::vector<std::string> inputs{x, w};
  if (!b.empty()) inputs.push_back(b);
  return Op("Conv", inputs, attrs);
}

std::string ModelBuilder::BatchNormalization(const std::string& x, const std::string& scale,
                                             const std::string& bias, const std::string& mean,
                                             const std::string& var, float epsilon) {
  return Op("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", epsilon}});
}

std::string ModelBuilder::Gemm(const std::string& a, const std::string& b, const std::string& c, bool trans_b,
                               float alpha, float beta) {
  std::vector<Attr> attrs{{"alpha", alpha}, {"beta", beta}};
  if (trans_b) attrs.push_back({"transB", int64_t{1}});
  std::vector<std::string> inputs{a, b};
  if (!c.empty()) inputs.push_back(c);
  return Op("Gemm", inputs, attrs);
}

std::string ModelBuilder::ReduceMean(const std::string& x, const std::vector<int64_t>& axes, bool keepdims) {
  const int64_t keep = keepdims ? 1 : 0;
  if (opset_ >= 18) return Op("ReduceMean", {x, Int64s("axes", axes)}, {{"keepdims", keep}});
  return Op("ReduceMean", {x}, {{"axes", axes}, {"keepdims", keep}});
}

std::string ModelBuilder::Softmax(const std::string& x, int64_t axis) {
  return Op("Softmax", {x}, {{"axis", axis}});
}

std::string ModelBuilder::Transpose(const std::string& x, const std::vector<int64_t>& perm) {
  return Op("Transpose", {x}, {{"perm", perm}});
}

std::string ModelBuilder::Reshape(const std::string& x, const std::vector<int64_t>& shape) {
  return Op("Reshape", {x, Int64s("shape", shape)});
}

std::string ModelBuilder::Concat(const std::vector<std::string>& xs, int64_t axis) {
  return Op("Concat", xs, {{"axis", axis}});
}

std::string ModelBuilder::Resize(const std::string& x, const std::vector<float>& scales) {
  const std::string s =
      Initializer(ParamName("scales"),
                  Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(scales.size())}, scales));
  return Op("Resize", {x, "", s}, {{"mode", std::string("nearest")}});
}

std::string ModelBuilder::MaxPool(const std::string& x, const std::vector<int64_t>& kernel,
                                  const std::vector<int64_t>& strides, const std::vector<int64_t>& pads) {
  std::vector<Attr> attrs{{"kernel_shape", kernel}, {"strides", strides}};
  if (!pads.empty()) attrs.push_back({"pads", pads});
  return Op("MaxPool", {x}, attrs);
}

std::string ModelBuilder::Flatten(const std::string& x, int64_t axis) {
  return Op("Flatten", {x}, {{"axis", axis}});
}

std::string ModelBuilder::Constant(const Tensor& value) { return Op("Constant", {}, {{"value", value}}); }

std::string ModelBuilder::ConvLayer(const std::string& x, int64_t in_channels, int64_t out_channels,
                                    int64_t kernel, int64_t stride, int64_t pad, bool bias) {
  const std::string w =
      KaimingWeight("weight", {out_channels, in_channels, kernel, kernel}, in_channels * kernel * kernel);
  const std::string b = bias ? RandomWeight("bias", {out_channels}, 0.05f) : "";
  return Conv(x, w, b,
              {.pads = {pad, pad, pad, pad}, .strides = {stride, stride}, .dilations = {}, .group = 1});
}

std::string ModelBuilder::BatchNormLayer(const std::string& x, int64_t channels) {
  // Scale near 1, variance positive: what a trained BatchNorm looks like.
  const std::string gamma = Initializer(ParamName("weight"), RandomTensor({channels}, 1.0f, 0.1f));
  const std::string beta = RandomWeight("bias", {channels}, 0.1f);
  const std::string mean = RandomWeight("running_mean", {channels}, 0.1f);
  Tensor var = RandomTensor({channels}, 0.0f, 0.2f);
  for (float& v : var.mutable_view<float>()) v = 1.0f + std::fabs(v);
  return BatchNormalization(x, gamma, beta, mean, Initializer(ParamName("running_var"), var));
}

std::string ModelBuilder::GemmLayer(const std::string& x, int64_t in_features, int64_t out_features) {
  const std::string w = KaimingWeight("weight", {out_features, in_features}, in_features);
  const std::string b = RandomWeight("bias", {out_features}, 0.05f);
  return Gemm(x, w, b, /*trans_b=*/true);
}

std::string ModelBuilder::LinearLayer(const std::string& x, int64_t in_features, int64_t out_features) {
  const std::string w =
      RandomWeight("weight", {in_features, out_features}, 1.0f / std::sqrt(static_cast<float>(in_features)));
  const std::string b = RandomWeight("bias", {out_features}, 0.05f);
  return Add(MatMul(x, w), b);
}

std::string ModelBuilder::LayerNorm(const std::string& x, int64_t channels, float epsilon) {
  const std::string mean = ReduceMean(x, {-1});
  const std::string centered = Sub(x, mean);
  const std::string sq = Pow(centered, Scalar("pow_exponent", 2.0f));
  const std::string var = ReduceMean(sq, {-1});
  const std::string std_dev = Sqrt(Add(var, Scalar("eps", epsilon)));
  const std::string normed = Div(centered, std_dev);
  const std::string gamma = Initializer(ParamName("weight"), RandomTensor({channels}, 1.0f, 0.1f));
  const std::string beta = RandomWeight("bias", {channels}, 0.05f);
  return Add(Mul(normed, gamma), beta);
}

std::string ModelBuilder::Gelu(const std::string& x) {
  const std::string erf = Erf(Div(x, Scalar("sqrt2", 1.4142135381698608f)));
  const std::string one_plus = Add(erf, Scalar("one", 1.0f));
  return Mul(Mul(x, one_plus), Scalar("half", 0.5f));
}

std::string ModelBuilder::SiLU(const std::string& x) { return Mul(x, Sigmoid(x)); }

}  // namespace parity
