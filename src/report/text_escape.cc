#include "report/text_escape.h"

#include <cstdint>

namespace parity {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v;
  if ((c & 0xE0) == 0xC0) {
    n = 2, v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, v = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// Calls emit(code point, bytes) for each character, U+FFFD for invalid bytes.
template <typename Emit>
void ForEachChar(std::string_view s, Emit emit) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = Utf8Length(s, i, &cp);
    if (n == 0) {
      emit(0xFFFD, kReplacement);
      ++i;
    } else {
      emit(cp, s.substr(i, n));
      i += n;
    }
  }
}

}  // namespace

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  ForEachChar(s, [&](uint32_t, std::string_view bytes) { out += bytes; });
  return out;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  ForEachChar(s, [&](uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += bytes;
    }
  });
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  ForEachChar(s, [&](uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) {
          out += kReplacement;
        } else {
          out += bytes;
        }
    }
  });
  return out;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonForScript(const nlohmann::json& j) {
  const std::string text = DumpJson(j);
  std::string out;
  out.reserve(text.size() + 64);
  // `<`, `>` and `&` occur in JSON text only inside strings, where \uXXXX
  // means the same character.
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace parity
