// The type of a model value as ONNX declares it: element type and dims, each
// dim a number, a symbol ("batch") or unknown. Protobuf-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace parity {

struct Dim {
  enum class Kind { kKnown, kSymbolic, kUnknown };
  Kind kind = Kind::kUnknown;
  int64_t value = 0;   // for kKnown
  std::string symbol;  // for kSymbolic

  static Dim Known(int64_t v) { return {Kind::kKnown, v, {}}; }
  static Dim Symbolic(std::string s) { return {Kind::kSymbolic, 0, std::move(s)}; }
  static Dim Unknown() { return {}; }
  // "224", "batch" or "?".
  std::string ToString() const;
  bool operator==(const Dim&) const = default;
};

struct TensorType {
  // ONNX TensorProto.DataType number; 0 when the value has no tensor type.
  int onnx_elem_type = 0;
  // nullopt when parity has no DType for it (complex, float8) or it is unknown.
  std::optional<DType> dtype;
  // "float32", "unsupported: 14", "unknown", or for non-tensors "sequence", "map", "optional".
  std::string dtype_name = "unknown";
  // False when the rank itself is unknown.
  bool has_shape = false;
  std::vector<Dim> dims;

  // "float32[batch, 3, 224, 224]", "float32[?]" style; "unknown" when nothing is known.
  std::string ToString() const;
  // The dims as numbers when all are known.
  std::optional<std::vector<int64_t>> StaticShape() const;
};

}  // namespace parity
