// Element types parity understands, their sizes and names, and the narrow
// float conversions (float16, bfloat16) used when widening on the fly.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parity {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kBool,
  kString,  // variable length; stored apart from the byte buffer
};

// Bytes per element; 0 for kString.
size_t DTypeSize(DType t);
// Canonical lower-case name: "float32", "bfloat16", "bool", "string", ...
std::string_view DTypeName(DType t);
// Inverse of DTypeName; also accepts numpy aliases ("float", "half", "int").
std::optional<DType> DTypeFromName(std::string_view name);
bool IsFloating(DType t);  // float16, bfloat16, float32, float64
bool IsInteger(DType t);   // signed and unsigned integers (not bool)

// ONNX's TensorProto.DataType numbers (also ORT's ONNXTensorElementDataType):
// FLOAT=1, UINT8=2, INT8=3, UINT16=4, INT16=5, INT32=6, INT64=7, STRING=8,
// BOOL=9, FLOAT16=10, DOUBLE=11, UINT32=12, UINT64=13, BFLOAT16=16.
// Returns nullopt for types parity does not handle (complex, float8, ...).
std::optional<DType> DTypeFromOnnx(int elem_type);
int DTypeToOnnx(DType t);

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // Inf or NaN, payload kept
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: value = mant * 2^-24, exact in float.
    float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

// Round to nearest even; overflow gives Inf, NaN stays NaN.
uint16_t FloatToHalf(float f);

inline float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
uint16_t FloatToBFloat16(float f);

}  // namespace parity
