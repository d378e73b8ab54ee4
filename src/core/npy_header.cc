#include "core/npy_header.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <tuple>
#include <utility>
#include <vector>

namespace parity {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// A Python literal as written by numpy's repr of the header dict.
struct PyField;
struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;                           // tuple, list
  std::vector<PyField> fields;                          // dict, keys are strings
};
// Not std::pair: a pair of an incomplete PyValue is not allowed (GCC accepts
// it, clang with libstdc++ does not).
struct PyField {
  std::string first;
  PyValue second;
};

const char* KindName(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::kString:
      return "a string";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kBool:
      return "a bool";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kTuple:
      return "a tuple";
    case PyValue::Kind::kList:
      return "a list";
    case PyValue::Kind::kDict:
      return "a dict";
  }
  return "?";
}

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : s_(text) {}

  Result<PyValue> ParseDocument() {
    PARITY_ASSIGN_OR_RETURN(PyValue v, ParseValue(0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the dict");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 16;

  std::unexpected<parity::Error> Error(std::string_view what) const {
    return Corrupt(fmt::format("malformed header dict at byte {}: {}", pos_, what));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<PyValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end");
    const char c = s_[pos_];
    if (c == '\'' || c == '"') return ParseString();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return ParseInt();
    if (c == '(') return ParseSequence(')', PyValue::Kind::kTuple, depth);
    if (c == '[') return ParseSequence(']', PyValue::Kind::kList, depth);
    if (c == '{') return ParseDict(depth);
    for (auto [word, kind, b] :
         {std::tuple{"True", PyValue::Kind::kBool, true}, std::tuple{"False", PyValue::Kind::kBool, false},
          std::tuple{"None", PyValue::Kind::kNone, false}}) {
      if (s_.substr(pos_).starts_with(word)) {
        pos_ += std::string_view(word).size();
        PyValue v;
        v.kind = kind;
        v.boolean = b;
        return v;
      }
    }
    return Error(fmt::format("unexpected character '{}'", c));
  }

  Result<PyValue> ParseString() {
    const char quote = s_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::kString;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c == '\n') return Error("newline inside a string");
      if (c == '\\') {
        if (pos_ >= s_.size()) break;
        c = s_[pos_++];
        if (c != '\\' && c != '\'' && c != '"') return Error("unsupported escape in a string");
      }
      v.str.push_back(c);
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    ++pos_;
    return v;
  }

  Result<PyValue> ParseInt() {
    const bool negative = s_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      return Error("expected a digit");
    uint64_t magnitude = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const uint64_t digit = static_cast<uint64_t>(s_[pos_++] - '0');
      if (magnitude > (uint64_t{1} << 62) / 10) return Error("integer out of range");
      magnitude = magnitude * 10 + digit;
    }
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 era numpy wrote (3L, 4L)
    PyValue v;
    v.kind = PyValue::Kind::kInt;
    v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  Result<PyValue> ParseSequence(char close, PyValue::Kind kind, int depth) {
    ++pos_;  // opening bracket
    PyValue v;
    v.kind = kind;
    bool saw_comma = false;
    while (!Consume(close)) {
      if (!v.items.empty() && !saw_comma) return Error(fmt::format("expected ',' or '{}'", close));
      PARITY_ASSIGN_OR_RETURN(PyValue item, ParseValue(depth + 1));
      v.items.push_back(std::move(item));
      saw_comma = Consume(',');
    }
    // Python: "(3)" is the integer 3, not a tuple.
    if (kind == PyValue::Kind::kTuple && v.items.size() == 1 && !saw_comma) return std::move(v.items[0]);
    return v;
  }

  Result<PyValue> ParseDict(int depth) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::Kind::kDict;
    bool saw_comma = false;
    while (!Consume('}')) {
      if (!v.fields.empty() && !saw_comma) return Error("expected ',' or '}'");
      SkipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return Error("expected a string key");
      PARITY_ASSIGN_OR_RETURN(PyValue key, ParseString());
      if (!Consume(':')) return Error("expected ':'");
      PARITY_ASSIGN_OR_RETURN(PyValue value, ParseValue(depth + 1));
      for (const auto& [k, unused] : v.fields)
        if (k == key.str) return Error(fmt::format("duplicate key '{}'", k));
      v.fields.push_back({std::move(key.str), std::move(value)});
      saw_comma = Consume(',');
    }
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

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
  PARITY_ASSIGN_OR_RETURN(PyValue dict, LiteralParser(text).ParseDocument());
  if (dict.kind != PyValue::Kind::kDict)
    return Corrupt(fmt::format("header is {}, not a dict", KindName(dict.kind)));
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
    return Corrupt(fmt::format("'descr' is {}, not a string", KindName(descr->kind)));
  if (fortran->kind != PyValue::Kind::kBool)
    return Corrupt(fmt::format("'fortran_order' is {}, not a bool", KindName(fortran->kind)));
  if (fortran->boolean)
    return Unsupported("Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  if (shape->kind != PyValue::Kind::kTuple)
    return Corrupt(fmt::format("'shape' is {}, not a tuple", KindName(shape->kind)));

  NpyHeader h;
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::kInt)
      return Corrupt(fmt::format("'shape' holds {}, not an integer", KindName(dim.kind)));
    h.shape.push_back(dim.integer);
  }
  PARITY_ASSIGN_OR_RETURN(DescrInfo info, ParseDescr(descr->str));
  h.dtype = info.dtype;
  h.big_endian = info.big_endian;
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
