// Python literals as repr() writes them: strings, ints, bools, None, tuples,
// lists and dicts with string keys. Two writers parity reads use them: numpy's
// .npy header dict ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }")
// and torch's dynamo exporter's node metadata ("['', 'layer1', 'layer1.0']").
// A parser, never an evaluator: nothing else is accepted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity {

struct PyField;
struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;   // tuple, list
  std::vector<PyField> fields;  // dict, keys are strings, in file order
};
// Not std::pair: a pair of an incomplete PyValue is not allowed (GCC accepts
// it, clang with libstdc++ does not).
struct PyField {
  std::string first;
  PyValue second;
};

// "a string", "an integer", ... for messages.
const char* PyKindName(PyValue::Kind k);

// Parses one literal filling all of `text` (surrounding blanks allowed).
// Strings take the escapes \\ \' \" \n \r \t and \xHH. Integers must fit in
// 62 bits; nesting is limited to 16 levels. Errors: kCorrupt, "malformed
// <what> at byte N: ...".
Result<PyValue> ParsePyLiteral(std::string_view text, std::string_view what = "literal");

// A list or tuple of strings, e.g. "['', 'layer1', 'layer1.0']". Errors:
// kCorrupt when `text` is not one.
Result<std::vector<std::string>> ParsePyStringList(std::string_view text);

}  // namespace parity
