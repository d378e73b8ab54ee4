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

}  // namespace parity
