#include "engine/quant/cast.h"

#include <cstdint>

namespace parity {

Tensor CastFloating(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype || !IsFloating(t.dtype()) || !IsFloating(dtype)) return t;
  if (dtype != DType::kFloat16 && dtype != DType::kFloat32 && dtype != DType::kFloat64) return t;
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = t.GetAsDouble(i);
    if (dtype == DType::kFloat16)
      out.mutable_view<uint16_t>()[i] = FloatToHalf(static_cast<float>(v));
    else if (dtype == DType::kFloat32)
      out.mutable_view<float>()[i] = static_cast<float>(v);
    else
      out.mutable_view<double>()[i] = v;
  }
  return out;
}

}  // namespace parity

namespace parity {

Sample FitToSession(const ort::Session& s, const Sample& sample) {
  Sample fitted{sample.name, {}};
  for (const auto& t : sample.tensors) {
    Tensor value = t.tensor;
    for (const auto& info : s.inputs())
      if (info.name == t.name && info.dtype) value = CastFloating(t.tensor, *info.dtype);
    fitted.tensors.Set(t.name, std::move(value));
  }
  return fitted;
}

Sample FitToGraph(const GraphView& view, const Sample& sample) {
  Sample fitted{sample.name, {}};
  for (const auto& t : sample.tensors) {
    const TensorType* type = view.Type(t.name);
    fitted.tensors.Set(t.name, type && type->dtype ? CastFloating(t.tensor, *type->dtype) : t.tensor);
  }
  return fitted;
}

TensorSet CastLike(const TensorSet& test, const TensorSet& ref) {
  TensorSet out;
  for (const auto& t : test) {
    const Tensor* r = ref.Find(t.name);
    out.Set(t.name, r != nullptr ? CastFloating(t.tensor, r->dtype()) : t.tensor);
  }
  return out;
}

}  // namespace parity
