// Escaping for the report writers. Tensor names, node names and error
// messages come from models and runtimes: they may hold `<`, `&`, quotes,
// "</script>", control characters or bytes that are not UTF-8. Every writer
// passes them through these functions, so every report stays well formed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace parity {

// Valid UTF-8 passes unchanged; each byte of an invalid sequence becomes
// U+FFFD. Pure function.
std::string SanitizeUtf8(std::string_view s);

// HtmlEscape and XmlEscape shorten the long names the process remembered
// (core/short_name.h ShortenLongNames) before they escape.
//
// Text for HTML element content and attribute values: & < > " ' escaped,
// invalid UTF-8 replaced, control characters but tab, newline and CR shown as
// "\xNN" / "\u00NN" (core/visible_text.h).
std::string HtmlEscape(std::string_view s);

// Text for XML 1.0 content and attributes: & < > " ' escaped; tab, newline
// and carriage return as character references (so attributes keep them);
// other characters XML 1.0 forbids (C0 controls, U+FFFE/U+FFFF) become U+FFFD.
std::string XmlEscape(std::string_view s);

// JSON text that can sit inside <script type="application/json">: `<`, `>`
// and `&` are written as \u003c, \u003e, \u0026 (so no "</script>" or "<!--"
// can end the element), C1 controls as \u0080-\u009f, invalid UTF-8 replaced (core/json_out.h). JSON.parse
// reads it back.
std::string JsonForScript(const nlohmann::json& j);

// Text bound for a terminal or a log (docs/security.md): a name from a model
// must not move the cursor, erase a line or retitle the window. Every C0
// control but newline and tab, DEL, and the C1 controls (U+0080-U+009F, which
// some terminals read as CSI) are written visibly as "\xNN" / "\u00NN";
// ESC passes only as the start of one of parity's own colour sequences
// (report/console/ansi.h), which cannot move anything. The long names the process
// remembered are shortened first (core/short_name.h). A stream is filtered in
// pieces: a sequence or a long name cut between two pieces is held until the
// next one.
class TerminalFilter {
 public:
  std::string Feed(std::string_view chunk);
  // What is still held (an incomplete sequence, a part of a name), escaped.
  std::string Flush();

 private:
  std::string Escape(std::string_view chunk);
  std::string held_;     // raw text a long name may start in
  std::string pending_;  // an escape sequence cut between two pieces
};
// A name from a model on one console line: every control character,
// newline and tab included, shown as "\xNN" (core/visible_text.h
// ShowControls), so a name cannot split a line or forge one.
std::string ConsoleName(std::string_view s);

// One piece, flushed: TerminalFilter{}.Feed(s) + Flush().
std::string TerminalSafe(std::string_view s);

}  // namespace parity
