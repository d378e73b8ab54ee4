#include "engine/inputs/random_sample.h"

#include <fmt/format.h>

#include <random>

#include "onnx/graph.h"

namespace parity {

Result<Sample> RandomSample(const Model& model, uint32_t seed) {
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(model, {.infer_shapes = false}));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Sample sample{.name = "random", .tensors = {}};
  for (const auto& name : view.inputs) {
    const TensorType* type = view.Type(name);
    if (type == nullptr || !type->dtype || *type->dtype == DType::kString)
      return Unsupported(fmt::format("input '{}': its type is unknown or not numeric", name));
    Shape shape;
    for (const auto& d : type->dims) shape.push_back(d.kind == Dim::Kind::kKnown ? d.value : 1);
    PARITY_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(*type->dtype, shape));
    std::memset(t.mutable_data(), 0, t.byte_size());
    if (*type->dtype == DType::kFloat32) {
      for (float& v : t.mutable_view<float>()) v = normal(rng);
    } else if (*type->dtype == DType::kFloat64) {
      for (double& v : t.mutable_view<double>()) v = normal(rng);
    } else if (*type->dtype == DType::kFloat16) {
      for (uint16_t& v : t.mutable_view<uint16_t>()) v = FloatToHalf(normal(rng));
    }
    PARITY_RETURN_IF_ERROR(sample.tensors.Add(name, std::move(t)));
  }
  return sample;
}

}  // namespace parity
