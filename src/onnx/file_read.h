// Internal: reading whole files with a size limit, for the ONNX adapter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/status.h"

namespace parity::onnx_adapter {

// Largest protobuf message protobuf can parse (2 GiB - 1).
inline constexpr int64_t kMaxProtoBytes = (int64_t{1} << 31) - 1;

// Reads the file whole. Errors: kNotFound when it does not exist,
// kInvalidArgument when it is not a regular file, cannot be read, or is larger
// than `max_bytes` (checked before reading). Messages name the file.
Result<std::string> ReadFileLimited(const std::filesystem::path& path, int64_t max_bytes);

// Reads `length` bytes at `offset` of `path`; kCorrupt when the file is shorter.
Result<std::string> ReadFileRange(const std::filesystem::path& path, int64_t offset, int64_t length);

}  // namespace parity::onnx_adapter
