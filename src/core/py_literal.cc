#include "core/py_literal.h"

#include <fmt/format.h>

#include <cctype>
#include <tuple>
#include <utility>

namespace parity {

const char* PyKindName(PyValue::Kind k) {
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

namespace {

class LiteralParser {
 public:
  LiteralParser(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  Result<PyValue> ParseDocument() {
    PARITY_ASSIGN_OR_RETURN(PyValue v, ParseValue(0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 16;

  std::unexpected<parity::Error> Error(std::string_view what) const {
    return Corrupt(fmt::format("malformed {} at byte {}: {}", what_, pos_, what));
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
        if (c == 'n') {
          c = '\n';
        } else if (c == 'r') {
          c = '\r';
        } else if (c == 't') {
          c = '\t';
        } else if (c == 'x') {
          if (pos_ + 2 > s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_])) ||
              !std::isxdigit(static_cast<unsigned char>(s_[pos_ + 1])))
            return Error("bad \\x escape in a string");
          c = static_cast<char>(std::stoi(std::string(s_.substr(pos_, 2)), nullptr, 16));
          pos_ += 2;
        } else if (c != '\\' && c != '\'' && c != '"') {
          return Error("unsupported escape in a string");
        }
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
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace

Result<PyValue> ParsePyLiteral(std::string_view text, std::string_view what) {
  return LiteralParser(text, what).ParseDocument();
}

Result<std::vector<std::string>> ParsePyStringList(std::string_view text) {
  PARITY_ASSIGN_OR_RETURN(PyValue v, ParsePyLiteral(text, "string list"));
  if (v.kind != PyValue::Kind::kList && v.kind != PyValue::Kind::kTuple)
    return Corrupt(fmt::format("expected a list of strings, got {}", PyKindName(v.kind)));
  std::vector<std::string> out;
  out.reserve(v.items.size());
  for (PyValue& item : v.items) {
    if (item.kind != PyValue::Kind::kString)
      return Corrupt(fmt::format("expected a list of strings, it holds {}", PyKindName(item.kind)));
    out.push_back(std::move(item.str));
  }
  return out;
}

}  // namespace parity
