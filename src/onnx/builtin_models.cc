#include "onnx/builtin_models.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "onnx/builder.h"

namespace parity {

namespace {

// Builtin models are fixed code: failing to build one is a bug.
Model MustBuild(ModelBuilder& b, const char* name) {
  auto m = b.Build(name);
  if (!m) {
    std::fprintf(stderr, "parity: bug: builtin model %s does not build: %s\n", name,
                 m.error().message().c_str());
    std::abort();
  }
  return std::move(*m);
}

std::string ConvBnReluBlock(ModelBuilder& b, const std::string& x, int64_t in, int64_t out, int64_t stride,
                            const std::string& name) {
  auto scope = b.Scope(name);
  std::string y;
  {
    auto s = b.Scope("conv");
    y = b.ConvLayer(x, in, out, 3, stride, 1, /*bias=*/false);
  }
  {
    auto s = b.Scope("bn");
    y = b.BatchNormLayer(y, out);
  }
  return b.Relu(y);
}

// conv-bn-relu-conv-bn + skip (1x1 conv-bn projection when the shape changes), relu.
std::string ResidualBlock(ModelBuilder& b, const std::string& x, int64_t in, int64_t out, int64_t stride,
                          const std::string& name) {
  auto scope = b.Scope(name);
  std::string y = ConvBnReluBlock(b, x, in, out, stride, "0");
  {
    auto s = b.Scope("conv2");
    y = b.ConvLayer(y, out, out, 3, 1, 1, false);
  }
  {
    auto s = b.Scope("bn2");
    y = b.BatchNormLayer(y, out);
  }
  std::string skip = x;
  if (stride != 1 || in != out) {
    auto s = b.Scope("downsample");
    {
      auto c = b.Scope("conv");
      skip = b.ConvLayer(x, in, out, 1, stride, 0, false);
    }
    auto n = b.Scope("bn");
    skip = b.BatchNormLayer(skip, out);
  }
  return b.Relu(b.Add(y, skip));
}

std::string EncoderLayer(ModelBuilder& b, const std::string& x, int64_t seq, int64_t hidden, int64_t heads,
                         const std::string& name) {
  auto scope = b.Scope(name);
  const int64_t head_dim = hidden / heads;
  std::string h;
  {
    auto s = b.Scope("ln1");
    h = b.LayerNorm(x, hidden);
  }
  std::string attn;
  {
    auto s = b.Scope("attn");
    const auto project = [&](const char* which, const std::vector<int64_t>& perm) {
      auto p = b.Scope(which);
      std::string t = b.LinearLayer(h, hidden, hidden);
      t = b.Reshape(t, {1, seq, heads, head_dim});
      return b.Transpose(t, perm);
    };
    const std::string q = project("q", {0, 2, 1, 3});  // [1, heads, seq, head_dim]
    const std::string k = project("k", {0, 2, 3, 1});  // [1, heads, head_dim, seq]
    const std::string v = project("v", {0, 2, 1, 3});
    std::string scores = b.Div(b.MatMul(q, k), b.Scalar("scale", std::sqrt(static_cast<float>(head_dim))));
    std::string ctx = b.MatMul(b.Softmax(scores, -1), v);
    ctx = b.Reshape(b.Transpose(ctx, {0, 2, 1, 3}), {1, seq, hidden});
    auto o = b.Scope("out");
    attn = b.LinearLayer(ctx, hidden, hidden);
  }
  const std::string x1 = b.Add(x, attn);
  {
    auto s = b.Scope("ln2");
    h = b.LayerNorm(x1, hidden);
  }
  {
    auto s = b.Scope("mlp");
    {
      auto f = b.Scope("fc1");
      h = b.LinearLayer(h, hidden, 4 * hidden);
    }
    h = b.Gelu(h);
    auto f = b.Scope("fc2");
    h = b.LinearLayer(h, 4 * hidden, hidden);
  }
  return b.Add(x1, h);
}

}  // namespace

Model ConvBnRelu() {
  ModelBuilder b(17, /*seed=*/2024);
  std::string x = b.Input("input", DType::kFloat32, Shape{1, 3, 224, 224});
  {
    auto s = b.Scope("conv");
    x = b.ConvLayer(x, 3, 16, 3, 1, 1, /*bias=*/true);
  }
  {
    auto s = b.Scope("bn");
    x = b.BatchNormLayer(x, 16);
  }
  {
    auto s = b.Scope("relu");
    x = b.Relu(x);
  }
  b.Output(x, "output");
  return MustBuild(b, "conv_bn_relu");
}

Model ResidualCnn() {
  ModelBuilder b(17, /*seed=*/7);
  std::string x = b.Input("input", DType::kFloat32, Shape{1, 3, 64, 64});
  x = ConvBnReluBlock(b, x, 3, 16, 1, "stem");  // 16 x 64 x 64
  x = b.MaxPool(x, {2, 2}, {2, 2});             // 16 x 32 x 32
  x = ResidualBlock(b, x, 16, 16, 1, "layer1/0");
  x = ResidualBlock(b, x, 16, 16, 1, "layer1/1");
  x = ResidualBlock(b, x, 16, 32, 2, "layer2/0");  // 32 x 16 x 16
  x = ResidualBlock(b, x, 32, 32, 1, "layer2/1");
  {
    auto s = b.Scope("up");
    x = b.Resize(x, {1.0f, 1.0f, 2.0f, 2.0f});  // 32 x 32 x 32
  }
  x = ConvBnReluBlock(b, x, 32, 32, 1, "fuse");
  x = ResidualBlock(b, x, 32, 32, 1, "layer3/0");
  x = ResidualBlock(b, x, 32, 32, 1, "layer3/1");
  {
    auto s = b.Scope("head");
    x = b.Flatten(b.GlobalAveragePool(x), 1);
    auto fc = b.Scope("fc");
    x = b.GemmLayer(x, 32, 10);
  }
  b.Output(x, "logits");
  return MustBuild(b, "residual_cnn");
}

namespace {

// Conv (no bias, padding k / 2) + BatchNormalization under scope `name`.
std::string ConvBn(ModelBuilder& b, const std::string& x, int64_t in, int64_t out, int64_t k, int64_t stride,
                   const std::string& name) {
  auto s = b.Scope(name);
  std::string y;
  {
    auto c = b.Scope("conv");
    y = b.ConvLayer(x, in, out, k, stride, k / 2, false);
  }
  auto n = b.Scope("bn");
  return b.BatchNormLayer(y, out);
}

}  // namespace

Model ResidualTrunk(int blocks, int downsample_every) {
  ModelBuilder b(17, /*seed=*/5);
  std::string x = b.Input("input", DType::kFloat32, Shape{1, 3, 32, 32});
  x = b.Relu(ConvBn(b, x, 3, 16, 3, 1, "stem"));
  int64_t c = 16;
  for (int i = 0; i < blocks; ++i) {
    auto s = b.Scope("block" + std::to_string(i));
    const bool down = downsample_every > 0 && (i + 1) % downsample_every == 0;
    const int64_t out = down ? c * 2 : c;
    std::string y = b.Relu(ConvBn(b, x, c, out, 3, down ? 2 : 1, "a"));
    y = ConvBn(b, y, out, out, 3, 1, "b");
    const std::string skip = down ? ConvBn(b, x, c, out, 1, 2, "down") : x;
    x = b.Relu(b.Add(y, skip));
    c = out;
  }
  {
    auto s = b.Scope("head");
    x = b.GemmLayer(b.Flatten(b.GlobalAveragePool(x), 1), c, 10);
  }
  b.Output(x, "logits");
  return MustBuild(b, "residual_trunk");
}

Model TransformerBlock() {
  ModelBuilder b(17, /*seed=*/11);
  constexpr int64_t kSeq = 16, kHidden = 64, kHeads = 4;
  std::string x = b.Input("input", DType::kFloat32, Shape{1, kSeq, kHidden});
  x = EncoderLayer(b, x, kSeq, kHidden, kHeads, "encoder/layer0");
  x = EncoderLayer(b, x, kSeq, kHidden, kHeads, "encoder/layer1");
  {
    auto s = b.Scope("head");
    {
      auto n = b.Scope("ln");
      x = b.LayerNorm(x, kHidden);
    }
    auto p = b.Scope("proj");
    x = b.SiLU(b.LinearLayer(x, kHidden, kHidden));
  }
  b.Output(x, "output");
  return MustBuild(b, "transformer_block");
}

Model OpsetModel(int opset) {
  ModelBuilder b(opset, /*seed=*/3);
  const std::string x = b.Input("x", DType::kFloat32, Shape{2, 8});
  std::string y = b.Sub(x, b.ReduceMean(x, {-1}));
  y = b.Relu(y);
  b.Output(y, "y");
  return MustBuild(b, "opset_model");
}

}  // namespace parity
