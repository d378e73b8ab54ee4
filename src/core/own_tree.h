// The rule a PyTorch dump's files follow (docs/security.md, promise 3),
// for every folder of tensors parity reads: a dataset and its entries,
// --reference-outputs, `run --inputs DIR`. The folder named on the command
// line may itself be a symlink; nothing below it may be one (it could lead
// out of the folder) unless the user allows it, and nothing below it may be
// a FIFO, a device or a socket (a FIFO was skipped silently, or blocked).
#pragma once

#include <filesystem>
#include <string_view>

#include "core/status.h"

namespace parity {

// At most this many entries are walked below one folder.
inline constexpr size_t kMaxOwnTreeEntries = 1'000'000;

// Walks `root` (following it if it is a symlink, nothing below it). Unless
// `allow_symlinks`: kInvalidArgument naming the first symlink found and
// `flag_hint` (", or --allow-symlinks to follow them", or empty where the
// command has no such flag). Always: kInvalidArgument naming an entry that
// is neither a regular file nor a folder (with symlinks allowed: what it
// leads to), and a walk past kMaxOwnTreeEntries.
Status CheckOwnTree(const std::filesystem::path& root, bool allow_symlinks, std::string_view flag_hint);

// The same rule for one file below a folder the user named: `path` is not a
// symlink unless allowed, and is a regular file. kNotFound when it is absent.
Status CheckOwnFile(const std::filesystem::path& path, bool allow_symlinks, std::string_view flag_hint);

}  // namespace parity
