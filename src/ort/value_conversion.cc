#include "ort/value_conversion.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

namespace {

// What a CPU tensor value holds; kUnsupported for a sequence, map or
// optional value, or an element type parity lacks.
struct ValueFacts {
  DType dtype = DType::kFloat32;
  Shape shape;
  size_t count = 0;
};

Result<ValueFacts> FactsOf(const Ort::Value& value) {
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
  ValueFacts facts{.dtype = *dtype, .shape = info.GetShape(), .count = info.GetElementCount()};
  PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(facts.shape));
  if (static_cast<size_t>(count) != facts.count)
    return InternalError(
        fmt::format("ORT reports {} elements for shape {}", facts.count, ShapeToString(facts.shape)));
  return facts;
}

Tensor StringsOf(const Ort::Value& value, ValueFacts facts) {
  std::vector<std::string> strings;
  strings.reserve(facts.count);
  for (size_t i = 0; i < facts.count; ++i) strings.push_back(value.GetStringTensorElement(i));
  return Tensor::FromStrings(std::move(facts.shape), std::move(strings));
}

}  // namespace

Result<Tensor> FromOrtValue(const Ort::Value& value) {
  PARITY_ASSIGN_OR_RETURN(ValueFacts facts, FactsOf(value));
  if (facts.dtype == DType::kString) return StringsOf(value, std::move(facts));
  PARITY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(facts.dtype, std::move(facts.shape)));
  if (tensor.byte_size() != 0)
    std::memcpy(tensor.mutable_data(), value.GetTensorRawData(), tensor.byte_size());
  return tensor;
}

Result<Tensor> AdoptOrtValue(Ort::Value value, std::shared_ptr<const void> keep_alive) {
  PARITY_ASSIGN_OR_RETURN(ValueFacts facts, FactsOf(value));
  if (facts.dtype == DType::kString) return StringsOf(value, std::move(facts));
  if (facts.count == 0) return Tensor::Create(facts.dtype, std::move(facts.shape));
  // The owner outlives every alias of its buffer: the value first, then the
  // session it may point into.
  struct Owner {
    std::shared_ptr<const void> session;
    Ort::Value value;
  };
  auto owner = std::make_shared<Owner>(Owner{std::move(keep_alive), std::move(value)});
  auto* data = static_cast<std::byte*>(const_cast<void*>(owner->value.GetTensorRawData()));
  return Tensor::Borrow(facts.dtype, std::move(facts.shape), std::shared_ptr<std::byte[]>(owner, data));
}

}  // namespace parity::ort
