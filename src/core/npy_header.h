// The header of a NumPy .npy file (format versions 1.0, 2.0 and 3.0):
//
//   "\x93NUMPY" major minor  header_len (uint16 LE for 1.x, uint32 LE for 2.x/3.x)
//   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + spaces + '\n'
//
// The dict is parsed as a Python literal (strings, ints, bools, None, tuples,
// lists, dicts), not by substring search. parity reads and writes C-order
// arrays of the DTypes below; bfloat16, which numpy lacks, is the 2-byte void
// descr '|V2' that ml_dtypes arrays are saved with.
//
//   float16/32/64 <f2 <f4 <f8   int8/16/32/64 |i1 <i2 <i4 <i8   bool |b1
//   bfloat16 |V2                uint8/16/32/64 |u1 <u2 <u4 <u8
//
// Big-endian ('>') descrs are accepted on read. Everything here is pure and
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// Bytes of the magic string and the version.
inline constexpr size_t kNpyPreambleBytes = 8;
// Longest header dict parity reads (numpy itself stops at 10,000 by default).
inline constexpr size_t kNpyMaxHeaderBytes = size_t{1} << 20;

struct NpyHeader {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool big_endian = false;  // the data must be byte-swapped on read
  // The data is in Fortran (column-major) order, as numpy writes a transposed
  // array; readers reorder it to C order (npy.cc).
  bool fortran_order = false;
  int64_t element_count = 0;
  uint64_t data_bytes = 0;  // element_count * element size
};

// Checks the 8-byte preamble and returns the size in bytes (2 or 4) of the
// header length field that follows. Errors: kCorrupt for a bad magic string,
// kUnsupported for a version other than 1.0, 2.0, 3.0.
Result<size_t> ParseNpyPreamble(std::string_view preamble);

// Parses the header dict. Errors: kCorrupt for syntax errors, missing or extra
// keys, wrong value types, negative dimensions or an element count above
// 2^40; kUnsupported for object, structured, string, complex
// and other dtypes that parity does not represent.
Result<NpyHeader> ParseNpyHeaderDict(std::string_view text);

// The descr parity writes for `dtype` ('<f4', '|b1', '|V2', ...); kUnsupported
// for kString.
Result<std::string> NpyDescr(DType dtype);

// The whole header for a C-order array: preamble, length and dict padded with
// spaces and '\n' to a multiple of 64 bytes. Version 1.0, or 2.0 when the dict
// does not fit in 65,535 bytes. kUnsupported for kString.
Result<std::string> EncodeNpyHeader(DType dtype, const Shape& shape);

}  // namespace parity
