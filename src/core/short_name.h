// A name from a model, shortened for where it is repeated: every report and
// console line repeats a model's names, some many times, so a long one would
// amplify the model's size (docs/security.md, third review).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace parity {

// The longest name a model may carry (refused at load above it,
// onnx/name_guard.h).
inline constexpr size_t kMaxNameBytes = 4096;
// Names are shown whole up to kMaxShownNameBytes; a longer one as its first
// kShownNamePrefixBytes bytes (cut on a UTF-8 boundary), "..." and the first
// 16 hex digits of its SHA-256. Pure function.
inline constexpr size_t kMaxShownNameBytes = 256;
inline constexpr size_t kShownNamePrefixBytes = 200;
std::string ShortName(std::string_view name);

// The long names of what this process loaded. A loader remembers each name
// longer than kMaxShownNameBytes it accepts (onnx/name_guard.h, the PyTorch
// dump's module names); every writer of a report or of the console then
// writes ShortenLongNames(text): each remembered name, wherever it occurs in
// the text (a message, a fused node's name made from it), becomes
// ShortName(name). Names are matched as bytes, before any escaping. With no
// long name remembered (every ordinary model) the text passes unchanged at
// the cost of one atomic load. Thread-safe.
void RememberLongName(std::string_view name);
std::string ShortenLongNames(std::string_view text);
// For a stream cut in pieces: shortens the names that start before
// `scan_end` (they may end past it), appends the text up to where it stopped
// to `out` and returns that position (>= scan_end, <= text.size()); the rest
// is to be scanned with the next piece.
size_t ShortenLongNamesInto(std::string_view text, size_t scan_end, std::string& out);
// The longest remembered name's length, 0 when none.
size_t LongestRememberedName();
// Forgets every remembered name (tests).
void ForgetLongNames();

}  // namespace parity
