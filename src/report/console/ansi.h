// The ANSI escapes parity's terminal writers use (only when WantsColor).
#pragma once

namespace parity::ansi {

inline constexpr const char* kRed = "\x1b[31;1m";  // bold red: failures
inline constexpr const char* kGreen = "\x1b[32m";
inline constexpr const char* kBoldGreen = "\x1b[32;1m";
inline constexpr const char* kYellow = "\x1b[33m";
inline constexpr const char* kDim = "\x1b[2m";
inline constexpr const char* kReset = "\x1b[0m";

}  // namespace parity::ansi
