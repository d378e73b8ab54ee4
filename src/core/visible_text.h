// Names from a model made safe for the text files parity writes beside its
// reports (a repro's README.md): control characters shown, Markdown that a
// name cannot break out of (docs/security.md, promise 6). The terminal and
// HTML writers use report/text_escape.h, which shows controls the same way.
#pragma once

#include <string>
#include <string_view>

namespace parity {

// Every C0 control (with `keep_line_breaks`, all but newline and tab) and DEL
// as "\xNN", every C1 control (U+0080-U+009F, UTF-8 C2 80-C2 9F) as
// "\u00NN"; other bytes pass unchanged. Pure function.
std::string ShowControls(std::string_view s, bool keep_line_breaks = false);

// A Markdown code span that shows `s` and that `s` cannot close or leave:
// ShowControls(s) (so no newline ends the span or starts a block) between
// backtick fences one longer than the longest run of backticks in `s`
// (CommonMark 0.31, 6.1), with a space inside each fence (stripped by
// renderers) so a backtick at either end of `s` is not part of a fence.
std::string MarkdownCode(std::string_view s);

}  // namespace parity
