#include "core/npy_header.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <tuple>
#include <utility>
#include <vector>

#include "core/py_literal.h"

namespace parity {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct DescrInfo {
  DType dtype;
  bool big_endian;
};

Result<DescrInfo> ParseDescr(std::string_view descr) {
  std::string_view d = descr;
  bool big_endian = false;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    big_endian = d[0] == '>';
    d.remove_prefix(1);
  }
  if (d.empty()) return Corrupt("empty dtype descr");
  const char kind = d[0];
  const std::string_view size = d.substr(1);
  auto unsupported = [&](std::string_view what) {
    return Unsupported(fmt::format("{} (descr '{}') are not supported", what, descr));
  };
  switch (kind) {
    case 'O':
      return unsupported("object arrays");
    case 'U':
    case 'S':
    case 'a':
      return unsupported("string arrays");
    case 'c':
      return unsupported("complex arrays");
    case 'M':
    case 'm':
      return unsupported("datetime arrays");
    default:
      break;
  }
  static constexpr struct {
    char kind;
    std::string_view size;
    DType dtype;
  } kTable[] = {
      {'f', "2", DType::kFloat16}, {'f', "4", DType::kFloat32},  {'f', "8", DType::kFloat64},
      {'i', "1", DType::kInt8},    {'i', "2", DType::kInt16},    {'i', "4", DType::kInt32},
      {'i', "8", DType::kInt64},   {'u', "1", DType::kUInt8},    {'u', "2", DType::kUInt16},
      {'u', "4", DType::kUInt32},  {'u', "8", DType::kUInt64},   {'b', "1", DType::kBool},
      {'?', "", DType::kBool},     {'V', "2", DType::kBFloat16},
  };
  for (const auto& row : kTable)
    if (row.kind == kind && row.size == size)
      return DescrInfo{row.dtype, big_endian && DTypeSize(row.dtype) > 1};
  if (kind == 'V') return unsupported("void types other than bfloat16 ('|V2')");
  return unsupported("dtypes other than float16/32/64, bfloat16, [u]int8-64 and bool");
}

}  // namespace

Result<size_t> ParseNpyPreamble(std::string_view preamble) {
  if (preamble.size() < kNpyPreambleBytes || preamble.substr(0, kMagic.size()) != kMagic)
    return Corrupt("not a .npy file (no \\x93NUMPY magic string)");
  const int major = static_cast<unsigned char>(preamble[6]);
  const int minor = static_cast<unsigned char>(preamble[7]);
  if (minor != 0 || major < 1 || major > 3)
    return Unsupported(
        fmt::format(".npy format version {}.{} is not supported (1.0, 2.0, 3.0 are)", major, minor));
  return major == 1 ? 2 : 4;
}

Result<NpyHeader> ParseNpyHeaderDict(std::string_view text) {
  PARITY_ASSIGN_OR_RETURN(PyValue dict, ParsePyLiteral(text, "header dict"));
  if (dict.kind != PyValue::Kind::kDict)
    return Corrupt(fmt::format("header is {}, not a dict", PyKindName(dict.kind)));
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (const auto& [key, value] : dict.fields) {
    if (key == "descr")
      descr = &value;
    else if (key == "fortran_order")
      fortran = &value;
    else if (key == "shape")
      shape = &value;
    else
      return Corrupt(fmt::format("header has unexpected key '{}'", key));
  }
  if (!descr || !fortran || !shape)
    return Corrupt("header lacks one of the keys 'descr', 'fortran_order', 'shape'");

  if (descr->kind == PyValue::Kind::kList)
    return Unsupported("structured dtypes (a list descr) are not supported");
  if (descr->kind != PyValue::Kind::kString)
    return Corrupt(fmt::format("'descr' is {}, not a string", PyKindName(descr->kind)));
  if (fortran->kind != PyValue::Kind::kBool)
    return Corrupt(fmt::format("'fortran_order' is {}, not a bool", PyKindName(fortran->kind)));
  if (shape->kind != PyValue::Kind::kTuple)
    return Corrupt(fmt::format("'shape' is {}, not a tuple", PyKindName(shape->kind)));

  NpyHeader h;
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::kInt)
      return Corrupt(fmt::format("'shape' holds {}, not an integer", PyKindName(dim.kind)));
    h.shape.push_back(dim.integer);
  }
  PARITY_ASSIGN_OR_RETURN(DescrInfo info, ParseDescr(descr->str));
  h.dtype = info.dtype;
  h.big_endian = info.big_endian;
  h.fortran_order = fortran->boolean;
  auto count = ElementCount(h.shape);
  if (!count) return Corrupt(count.error().message());
  h.element_count = *count;
  h.data_bytes = static_cast<uint64_t>(*count) * DTypeSize(h.dtype);  // <= 2^40 * 8: no overflow
  return h;
}

Result<std::string> NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kFloat16:
      return "<f2";
    case DType::kBFloat16:
      return "|V2";
    case DType::kInt8:
      return "|i1";
    case DType::kUInt8:
      return "|u1";
    case DType::kInt16:
      return "<i2";
    case DType::kUInt16:
      return "<u2";
    case DType::kInt32:
      return "<i4";
    case DType::kUInt32:
      return "<u4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt64:
      return "<u8";
    case DType::kBool:
      return "|b1";
    case DType::kString:
      break;
  }
  return Unsupported(fmt::format("cannot write {} tensors as .npy", DTypeName(dtype)));
}

Result<std::string> EncodeNpyHeader(DType dtype, const Shape& shape) {
  PARITY_ASSIGN_OR_RETURN(std::string descr, NpyDescr(dtype));
  // numpy's repr of a tuple: (), (3,), (2, 3).
  std::string shape_text =
      shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_text);
  for (int major : {1, 2}) {
    const size_t len_bytes = major == 1 ? 2 : 4;
    const size_t unpadded = kNpyPreambleBytes + len_bytes + dict.size() + 1;  // + '\n'
    const size_t total = (unpadded + 63) / 64 * 64;
    const size_t header_len = total - kNpyPreambleBytes - len_bytes;
    if (major == 1 && header_len > 0xffff) continue;
    std::string out(kMagic);
    out.push_back(static_cast<char>(major));
    out.push_back('\0');
    for (size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
    out += dict;
    out.append(total - unpadded, ' ');
    out.push_back('\n');
    return out;
  }
  return InternalError("unreachable");
}

}  // namespace parity
