#include "report/text_escape.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>

#include "core/json_out.h"
#include "core/short_name.h"
#include "core/visible_text.h"
#include "report/json/json_helpers.h"

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

// The entity of a character markup reserves; `apos` differs between HTML
// (&#39;) and XML (&apos;).
std::optional<std::string_view> MarkupEntity(uint32_t cp, std::string_view apos) {
  switch (cp) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return apos;
    default:
      return std::nullopt;
  }
}

// f(s), with the long names this process remembered shortened in s first
// (core/short_name.h): a report repeats a name, not a model's size.
template <typename F>
std::string WithShortNames(std::string_view s, F f) {
  if (LongestRememberedName() == 0) return f(s);
  const std::string shortened = ShortenLongNames(s);
  return f(std::string_view(shortened));
}

}  // namespace

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  ForEachChar(s, [&](uint32_t, std::string_view bytes) { out += bytes; });
  return out;
}

std::string HtmlEscape(std::string_view text) {
  return WithShortNames(text, [](std::string_view s) {
    std::string out;
    out.reserve(s.size() + 16);
    ForEachChar(s, [&](uint32_t cp, std::string_view bytes) {
      if (auto entity = MarkupEntity(cp, "&#39;")) {
        out += *entity;
      } else if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F) {
        // Controls from a model's names are shown, never passed (a raw ESC
        // in report.html); tab, newline and CR are kept for <pre> text.
        out += fmt::format("\\x{:02x}", cp);
      } else if (cp >= 0x80 && cp <= 0x9F) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        out += bytes;
      }
    });
    return out;
  });
}

// A long name is shortened to its first bytes and a hash (core/short_name.h).
std::string ConsoleName(std::string_view s) { return ShowControls(ShortName(s)); }

std::string XmlEscape(std::string_view text) {
  return WithShortNames(text, [](std::string_view s) {
    std::string out;
    out.reserve(s.size() + 16);
    ForEachChar(s, [&](uint32_t cp, std::string_view bytes) {
      if (auto entity = MarkupEntity(cp, "&apos;")) {
        out += *entity;
      } else if (cp == '\t' || cp == '\n' || cp == '\r') {
        out += fmt::format("&#{};", cp);  // kept in attribute values too
      } else if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) {
        out += kReplacement;
      } else {
        out += bytes;
      }
    });
    return out;
  });
}

namespace {

// parity's own colour sequences (report/console/ansi.h): the only ESC that passes.
constexpr std::string_view kOwnSgr[] = {"\x1b[31;1m", "\x1b[32m", "\x1b[32;1m", "\x1b[33m", "\x1b[2m",
                                        "\x1b[0m"};

}  // namespace

std::string TerminalFilter::Feed(std::string_view chunk) {
  const size_t longest = LongestRememberedName();
  if (longest == 0 && held_.empty()) return Escape(chunk);
  // A remembered long name cut between two pieces is decided with the next
  // one: the last (longest - 1) bytes wait, no more.
  std::string data = std::move(held_);
  held_.clear();
  data.append(chunk);
  const size_t scan_end = data.size() >= longest ? data.size() - (longest > 0 ? longest - 1 : 0) : 0;
  std::string shortened;
  const size_t done = ShortenLongNamesInto(data, scan_end, shortened);
  held_.assign(data, done);
  return Escape(shortened);
}

std::string TerminalFilter::Escape(std::string_view chunk) {
  std::string data = std::move(pending_);
  pending_.clear();
  data.append(chunk);
  std::string out;
  out.reserve(data.size());
  size_t i = 0;
  while (i < data.size()) {
    const auto c = static_cast<unsigned char>(data[i]);
    const std::string_view rest(data.data() + i, data.size() - i);
    if (c == 0x1b) {
      bool matched = false, prefix = false;
      for (std::string_view sgr : kOwnSgr) {
        if (rest.starts_with(sgr)) {
          out.append(sgr);
          i += sgr.size();
          matched = true;
          break;
        }
        if (sgr.starts_with(rest)) prefix = true;
      }
      if (matched) continue;
      if (prefix) {  // cut between two pieces: decide with the next one
        pending_.assign(rest);
        break;
      }
      out += "\\x1b";
      ++i;
    } else if (c == 0xc2) {
      if (rest.size() == 1) {
        pending_.assign(rest);
        break;
      }
      const auto next = static_cast<unsigned char>(rest[1]);
      if (next >= 0x80 && next <= 0x9f) {
        out += fmt::format("\\u{:04x}", next);
        i += 2;
      } else {
        out += data[i++];
      }
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out += data[i++];
    }
  }
  return out;
}

std::string TerminalFilter::Flush() {
  std::string out = held_.empty() ? std::string() : Escape(ShortenLongNames(held_));
  held_.clear();
  for (char ch : pending_) {
    const auto c = static_cast<unsigned char>(ch);
    out += c < 0x20 || c == 0x7f || c == 0xc2 ? fmt::format("\\x{:02x}", c) : std::string(1, ch);
  }
  pending_.clear();
  return out;
}

std::string TerminalSafe(std::string_view s) {
  TerminalFilter f;
  std::string out = f.Feed(s);
  return out + f.Flush();
}

std::string JsonForScript(const nlohmann::json& j) {
  std::string text;
  if (LongestRememberedName() == 0) {
    text = ToJsonText(j);
  } else {
    nlohmann::json shown = j;
    ShortenLongNamesIn(shown);
    text = ToJsonText(shown);
  }
  std::string out;
  out.reserve(text.size() + 64);
  // `<`, `>` and `&` occur in JSON text only inside strings, where \uXXXX
  // means the same character.
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // A C1 control (UTF-8 C2 80-C2 9F, only ever inside a string) is written
    // as \u00NN too: the page holds no raw control byte (issue 29, probe 7).
    if (c == '\xC2' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
      continue;
    }
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
