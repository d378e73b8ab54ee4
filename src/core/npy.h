// Reading and writing NumPy .npy files, from and to files and memory.
//
// Supported: format versions 1.0, 2.0, 3.0; C order; the dtypes listed in
// npy_header.h, little- or big-endian (big-endian data is byte-swapped on
// read, so a Tensor is always in host order, which parity requires to be
// little-endian). Writers emit version 1.0 (2.0 for huge headers),
// little-endian, 64-byte aligned data, bfloat16 as '|V2'.
//
// Reading never trusts the header: the element count is checked for overflow
// and the declared data size is compared with the real size of the file or
// buffer BEFORE anything is allocated. The data must fill the rest of the
// file exactly: a shorter file is truncated, and trailing bytes after the
// data are refused too (kCorrupt), since a header that disagrees with its
// file is more likely damaged than deliberately padded.
//
// Errors are one line. File functions prefix the path ("a.npy: ..."); the
// memory and stream forms leave the context to the caller.
// All functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/atomic_file.h"
#include "core/npy_header.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// A sequential source of bytes (a file, a buffer, a zip entry).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills `out` and returns out.size(), or fewer bytes only at the end of the
  // stream. Errors describe the failure without naming the source.
  virtual Result<size_t> Read(std::span<std::byte> out) = 0;
};

// Reads one .npy image of exactly `stream_size` bytes (as declared by the
// container: the file size, the buffer length, the zip entry's size) from
// `in`, leaving `in` positioned after the data. Errors: kCorrupt (truncated,
// sizes disagree, malformed header), kUnsupported (see npy_header.h),
// kInvalidArgument when the tensor cannot be allocated.
Result<Tensor> ReadNpyFrom(ByteSource& in, uint64_t stream_size);

// The whole .npy image in memory.
Result<Tensor> ParseNpy(std::span<const std::byte> bytes);

// Reads a .npy file. kNotFound when it does not exist.
Result<Tensor> ReadNpy(const std::filesystem::path& path);

// The .npy image of `tensor` (header + data). kUnsupported for strings.
Result<std::vector<std::byte>> SerializeNpy(const Tensor& tensor);

// Writes `tensor` to `path` atomically (see atomic_file.h; Sync::kByFolder
// inside a StagedDir or a scratch folder).
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor, Sync sync = Sync::kEach);

}  // namespace parity
