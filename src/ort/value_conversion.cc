#include "ort/value_conversion.h"

#include <fmt/format.h>

#include <cstring>

namespace parity::ort {

ONNXTensorElementDataType ToOrtElementType(DType dtype) {
  // ORT's enum uses ONNX's TensorProto.DataType numbers.
  return static_cast<ONNXTensorElementDataType>(DTypeToOnnx(dtype));
}

std::optional<DType> FromOrtElementType(ONNXTensorElementDataType type) {
  return DTypeFromOnnx(static_cast<int>(type));
}

Result<Ort::Value> ToOrtValue(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  if (tensor.dtype() == DType::kString) {
    if (static_cast<int64_t>(tensor.strings().size()) != tensor.size())
      return InternalError(fmt::format("string tensor of shape {} holds {} strings", ShapeToString(shape),
                                       tensor.strings().size()));
    Ort::AllocatorWithDefaultOptions allocator;
    Ort::Value value =
        Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
    std::vector<const char*> pointers;
    pointers.reserve(tensor.strings().size());
    for (const std::string& s : tensor.strings()) pointers.push_back(s.c_str());
    // Embedded NULs would be cut here; ONNX strings are text in practice.
    if (!pointers.empty()) value.FillStringTensor(pointers.data(), pointers.size());
    return value;
  }
  static const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
  // A default-constructed Tensor has no buffer; ORT wants a non-null pointer
  // even for zero bytes.
  static std::byte empty[64];
  // ORT never writes an input tensor, so lending it the const buffer is safe;
  // the C API simply has no const overload.
  void* data = tensor.data() != nullptr ? const_cast<std::byte*>(tensor.data()) : empty;
  return Ort::Value::CreateTensor(cpu, data, tensor.byte_size(), shape.data(), shape.size(),
                                  ToOrtElementType(tensor.dtype()));
}

Result<Tensor> FromOrtValue(const Ort::Value& value) {
  if (!value) return RuntimeError("ORT returned no value");
  if (!value.IsTensor()) {
    const ONNXType kind = value.GetTypeInfo().GetONNXType();
    const char* name = kind == ONNX_TYPE_SEQUENCE   ? "a sequence"
                       : kind == ONNX_TYPE_MAP      ? "a map"
                       : kind == ONNX_TYPE_OPTIONAL ? "an optional"
                                                    : "a non-tensor value";
    return Unsupported(fmt::format("value is {}; parity handles tensors only", name));
  }
  const Ort::TensorTypeAndShapeInfo info = value.GetTensorTypeAndShapeInfo();
  const ONNXTensorElementDataType elem = info.GetElementType();
  const std::optional<DType> dtype = FromOrtElementType(elem);
  if (!dtype)
    return Unsupported(fmt::format("element type {} (ONNX number) is not supported", static_cast<int>(elem)));
  Shape shape = info.GetShape();
  const size_t count = info.GetElementCount();

  if (*dtype == DType::kString) {
    std::vector<std::string> strings;
    strings.reserve(count);
    for (size_t i = 0; i < count; ++i) strings.push_back(value.GetStringTensorElement(i));
    return Tensor::FromStrings(std::move(shape), std::move(strings));
  }
  PARITY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(*dtype, std::move(shape)));
  if (static_cast<size_t>(tensor.size()) != count)
    return InternalError(
        fmt::format("ORT reports {} elements for shape {}", count, ShapeToString(tensor.shape())));
  if (tensor.byte_size() != 0)
    std::memcpy(tensor.mutable_data(), value.GetTensorRawData(), tensor.byte_size());
  return tensor;
}

}  // namespace parity::ort
