#include "core/visible_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace parity {

std::string ShowControls(std::string_view s, bool keep_line_breaks) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      out += fmt::format("\\u{:04x}", next);
      ++i;
    } else if ((c < 0x20 && !(keep_line_breaks && (c == '\n' || c == '\t'))) || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string MarkdownCode(std::string_view s) {
  const std::string shown = ShowControls(s);
  size_t longest = 0;
  for (size_t i = 0, run = 0; i < shown.size(); ++i) {
    run = shown[i] == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  return fence + " " + shown + " " + fence;
}

}  // namespace parity
