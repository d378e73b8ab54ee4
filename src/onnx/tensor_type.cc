#include "onnx/tensor_type.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/tensor_type_internal.h"

namespace parity {

std::string Dim::ToString() const {
  switch (kind) {
    case Kind::kKnown:
      return std::to_string(value);
    case Kind::kSymbolic:
      return symbol;
    case Kind::kUnknown:
      break;
  }
  return "?";
}

std::string TensorType::ToString() const {
  if (!has_shape) return dtype_name;
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(d.ToString());
  return fmt::format("{}[{}]", dtype_name, fmt::join(parts, ", "));
}

std::optional<std::vector<int64_t>> TensorType::StaticShape() const {
  if (!has_shape) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& d : dims) {
    if (d.kind != Dim::Kind::kKnown) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

namespace onnx_adapter {

TensorType TensorTypeFromProto(const onnx::TypeProto& type) {
  TensorType out;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      break;
    case onnx::TypeProto::kSequenceType:
      out.dtype_name = "sequence";
      return out;
    case onnx::TypeProto::kMapType:
      out.dtype_name = "map";
      return out;
    case onnx::TypeProto::kOptionalType:
      out.dtype_name = "optional";
      return out;
    case onnx::TypeProto::kSparseTensorType:
      out.dtype_name = "sparse_tensor";
      return out;
    default:
      return out;
  }
  const auto& tt = type.tensor_type();
  out.onnx_elem_type = tt.elem_type();
  out.dtype = DTypeFromOnnx(tt.elem_type());
  if (out.dtype)
    out.dtype_name = std::string(DTypeName(*out.dtype));
  else if (tt.elem_type() != 0)
    out.dtype_name = fmt::format("unsupported: {}", tt.elem_type());
  if (tt.has_shape()) {
    out.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value())
        out.dims.push_back(Dim::Known(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        out.dims.push_back(Dim::Symbolic(d.dim_param()));
      else
        out.dims.push_back(Dim::Unknown());
    }
  }
  return out;
}

}  // namespace onnx_adapter
}  // namespace parity
