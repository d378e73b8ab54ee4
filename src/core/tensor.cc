#include "core/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parity {
namespace {

std::shared_ptr<std::byte[]> AllocateAligned(size_t bytes) {
  // 64-byte alignment lets the comparator's loops use aligned vector loads.
  const size_t rounded = ((bytes + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) throw std::bad_alloc();
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

}  // namespace

Result<int64_t> ElementCount(const Shape& shape, int64_t limit) {
  int64_t n = 1;
  // Every dim is checked before a zero ends the count: [0, -5] is no shape
  // (found by fuzz/string_tensor_fuzz.cc).
  for (int64_t d : shape)
    if (d < 0) return InvalidArgument(fmt::format("negative dimension {} in shape {}", d, ShapeToString(shape)));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  for (int64_t d : shape) {
    if (n > limit / d)
      return InvalidArgument(fmt::format("shape {} has more than {} elements", ShapeToString(shape), limit));
    n *= d;
  }
  return n;
}

std::string ShapeToString(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  count_ = ElementCount(shape_).value_or(0);
  if (dtype_ == DType::kString)
    strings_.resize(static_cast<size_t>(count_));
  else
    buffer_ = AllocateAligned(byte_size());
}

Result<Tensor> Tensor::Create(DType dtype, Shape shape) {
  PARITY_RETURN_IF_ERROR(ElementCount(shape));
  try {
    return Tensor(dtype, shape);  // a copy: `shape` names the tensor in the error below
  } catch (const std::bad_alloc&) {
    const int64_t bytes = *ElementCount(shape) * static_cast<int64_t>(DTypeSize(dtype));
    return InvalidArgument(fmt::format("cannot allocate a {} tensor of shape {} ({} bytes)", DTypeName(dtype),
                                       ShapeToString(shape), bytes));
  }
}

Tensor Tensor::FromStrings(Shape shape, std::vector<std::string> values) {
  Tensor t(DType::kString, std::move(shape));
  t.strings_ = std::move(values);
  return t;
}

Tensor Tensor::Borrow(DType dtype, Shape shape, std::shared_ptr<std::byte[]> buffer) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.count_ = ElementCount(t.shape_).value_or(0);
  t.buffer_ = std::move(buffer);
  return t;
}

double Tensor::GetAsDouble(int64_t i) const {
  const std::byte* p = data() + static_cast<size_t>(i) * DTypeSize(dtype_);
  auto load = [p]<typename T>(T*) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (dtype_) {
    case DType::kFloat32: return load(static_cast<float*>(nullptr));
    case DType::kFloat64: return load(static_cast<double*>(nullptr));
    case DType::kFloat16: return HalfToFloat(load(static_cast<uint16_t*>(nullptr)));
    case DType::kBFloat16: return BFloat16ToFloat(load(static_cast<uint16_t*>(nullptr)));
    case DType::kInt8: return load(static_cast<int8_t*>(nullptr));
    case DType::kUInt8: return load(static_cast<uint8_t*>(nullptr));
    case DType::kInt16: return load(static_cast<int16_t*>(nullptr));
    case DType::kUInt16: return load(static_cast<uint16_t*>(nullptr));
    case DType::kInt32: return load(static_cast<int32_t*>(nullptr));
    case DType::kUInt32: return load(static_cast<uint32_t*>(nullptr));
    case DType::kInt64: return static_cast<double>(load(static_cast<int64_t*>(nullptr)));
    case DType::kUInt64: return static_cast<double>(load(static_cast<uint64_t*>(nullptr)));
    case DType::kBool: return load(static_cast<uint8_t*>(nullptr)) != 0 ? 1.0 : 0.0;
    case DType::kString: return 0.0;
  }
  return 0.0;
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::kString) return strings_ == other.strings_;
  return byte_size() == 0 || std::memcmp(data(), other.data(), byte_size()) == 0;
}

Result<Tensor> Tensor::Reshaped(Shape shape) const {
  PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(shape));
  if (n != count_)
    return InvalidArgument(fmt::format("cannot reshape {} to {}", ShapeToString(shape_), ShapeToString(shape)));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Copy() const {
  if (dtype_ == DType::kString) return FromStrings(shape_, strings_);
  Tensor t(dtype_, shape_);
  if (byte_size() != 0) std::memcpy(t.mutable_data(), data(), byte_size());
  return t;
}

Status TensorSet::Add(std::string name, Tensor tensor) {
  if (Contains(name)) return InvalidArgument(fmt::format("tensor '{}' given twice", name));
  index_.emplace(name, items_.size());
  items_.push_back({std::move(name), std::move(tensor)});
  return {};
}

void TensorSet::Set(std::string name, Tensor tensor) {
  if (auto it = index_.find(name); it != index_.end()) {
    items_[it->second].tensor = std::move(tensor);
    return;
  }
  index_.emplace(name, items_.size());
  items_.push_back({std::move(name), std::move(tensor)});
}

const Tensor* TensorSet::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &items_[it->second].tensor;
}

std::vector<std::string> TensorSet::Names() const {
  std::vector<std::string> names;
  names.reserve(items_.size());
  for (const auto& item : items_) names.push_back(item.name);
  return names;
}

}  // namespace parity
