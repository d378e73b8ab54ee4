// A dense, C-ordered tensor of one dtype, and an ordered set of named tensors.
//
// Tensor owns its bytes through a shared, 64-byte-aligned buffer: copying a
// Tensor is cheap and shares the data (treat shared data as read-only).
// String tensors keep their elements in `strings()` instead of the buffer.
// Not thread-safe for concurrent mutation; concurrent reads are fine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace parity {

using Shape = std::vector<int64_t>;

// Number of elements; 1 for a 0-d shape. Returns an error when a dimension is
// negative or the product overflows `limit` elements.
Result<int64_t> ElementCount(const Shape& shape, int64_t limit = int64_t{1} << 40);
std::string ShapeToString(const Shape& shape);  // "[1, 3, 224, 224]"

class Tensor {
 public:
  Tensor() = default;
  // Allocates an uninitialised tensor. Precondition: shape is valid (see
  // ElementCount); use Tensor::Create for untrusted shapes.
  Tensor(DType dtype, Shape shape);
  static Result<Tensor> Create(DType dtype, Shape shape);
  static Tensor FromStrings(Shape shape, std::vector<std::string> values);
  // Wraps bytes someone else owns (a NumPy array's buffer) without copying:
  // `buffer` keeps them alive (an aliasing or no-op-deleter shared_ptr when
  // the caller guarantees the lifetime). Preconditions: not kString; the
  // buffer holds ElementCount(shape) * DTypeSize(dtype) bytes, C-ordered.
  // Such a buffer need not be 64-byte aligned: readers use unaligned loads.
  static Tensor Borrow(DType dtype, Shape shape, std::shared_ptr<std::byte[]> buffer);

  template <typename T>
  static Tensor FromVector(DType dtype, Shape shape, const std::vector<T>& values) {
    Tensor t(dtype, std::move(shape));
    if (t.byte_size() > 0) std::memcpy(t.mutable_data(), values.data(), t.byte_size());
    return t;
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const { return count_; }
  size_t byte_size() const { return static_cast<size_t>(count_) * DTypeSize(dtype_); }

  const std::byte* data() const { return buffer_.get(); }
  std::byte* mutable_data() { return buffer_.get(); }
  std::span<const std::byte> bytes() const { return {data(), byte_size()}; }

  template <typename T>
  std::span<const T> view() const {
    return {reinterpret_cast<const T*>(data()), static_cast<size_t>(count_)};
  }
  template <typename T>
  std::span<T> mutable_view() {
    return {reinterpret_cast<T*>(mutable_data()), static_cast<size_t>(count_)};
  }

  const std::vector<std::string>& strings() const { return strings_; }

  // Element i widened to double (bool/int/float); precondition: not a string.
  double GetAsDouble(int64_t i) const;

  // Byte-for-byte equality of dtype, shape and data.
  bool BitwiseEquals(const Tensor& other) const;

  // Same data viewed under another shape with the same element count.
  Result<Tensor> Reshaped(Shape shape) const;

  // The same values in a buffer of its own: what a borrowed buffer's owner
  // (Borrow) need not outlive.
  Tensor Copy() const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  int64_t count_ = 0;
  std::shared_ptr<std::byte[]> buffer_;
  std::vector<std::string> strings_;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Named tensors in insertion order (the order of a model's inputs, outputs or
// topological order of intermediates). Names are unique; lookups by name are
// hashed (a trace of a 100k-node model holds 100k tensors, and each is looked
// up: a scan per lookup made that quadratic, issue 29).
class TensorSet {
 public:
  // Fails (invalid argument) when `name` is already present.
  Status Add(std::string name, Tensor tensor);
  // Replaces or appends.
  void Set(std::string name, Tensor tensor);
  const Tensor* Find(std::string_view name) const;
  bool Contains(std::string_view name) const { return Find(name) != nullptr; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> Names() const;

  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  const NamedTensor& operator[](size_t i) const { return items_[i]; }

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<NamedTensor> items_;
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> index_;  // name -> position in items_
};

// One set of input tensors, named by kind (docs/contract.md (""Samples"")): "default",
// "typical", "boundary_batch4", "anomaly_nan", ...
struct Sample {
  std::string name;
  TensorSet tensors;
};

}  // namespace parity
