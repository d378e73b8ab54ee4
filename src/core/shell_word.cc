#include "core/shell_word.h"

#include <fmt/format.h>

namespace parity {

std::string ShellWord(std::string_view s) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%";
  if (!s.empty() && s.find_first_not_of(kPlain) == std::string_view::npos) return std::string(s);
  bool controls = false;
  for (unsigned char c : s) controls |= c < 0x20 || c == 0x7f;
  std::string out;
  if (!controls) {
    out = "'";
    for (char c : s) out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
    return out + "'";
  }
  out = "$'";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'')
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "'";
}

}  // namespace parity
