// Reading and writing NumPy .npz archives (zip files of .npy entries, as made
// by np.savez and np.savez_compressed) through libzip.
//
// Entry `NAME.npy` holds tensor `NAME`; names may contain '/' (the sample
// convention of docs/contract.md, "typical/images"). Tensors keep archive order.
//
// Reading does not trust the zip's declared sizes: an entry whose declared
// uncompressed size is above `max_entry_bytes`, or above
// `ratio_check_above_bytes` with a compression ratio above
// `max_compression_ratio`, is refused before anything is allocated; the .npy
// header inside must agree with the declared size; and an entry whose stream
// produces more bytes than declared is refused (zip bomb). The archive as a
// whole is judged too, from its central directory and before any entry is
// read: entries whose compressed sizes add up to more than the file holds
// share data (several directory entries pointing at one stream: refused,
// kCorrupt), and the declared uncompressed sizes, each entry counted every
// time it appears, must fit `max_total_bytes` (kUnsupported), so an archive
// of many entries each under the per-entry limits cannot ask for more memory
// in all than the budget. Entries not ending
// in ".npy" are an error by default (an .npz is a tensor container; a stray
// file usually means the wrong archive), or skipped with
// `skip_non_npy_entries`. Directory entries are always skipped.
//
// Errors are one line naming the archive and, where it applies, the entry:
// "in.npz: entry 'x.npy': ...". Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <filesystem>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// The default budget of all entries together: half this machine's physical
// memory, at most 64 GiB (what one read may hold at once; the tensors are
// kept).
uint64_t DefaultNpzTotalBudget();

struct NpzReadOptions {
  uint64_t max_entry_bytes = uint64_t{16} << 30;
  uint64_t max_total_bytes = DefaultNpzTotalBudget();
  double max_compression_ratio = 1000;
  uint64_t ratio_check_above_bytes = uint64_t{1} << 30;
  bool skip_non_npy_entries = false;
};

// Errors: kNotFound (no such file), kCorrupt (not a zip, damaged entry, size
// lies, duplicate names), kUnsupported (encrypted entries, unsupported
// compression, sizes above the limits, dtypes of npy.h).
Result<TensorSet> ReadNpz(const std::filesystem::path& path, const NpzReadOptions& options = {});

enum class NpzCompression { kDeflate, kStore };

struct NpzWriteOptions {
  NpzCompression compression = NpzCompression::kDeflate;
  int deflate_level = 6;  // 1 (fast) .. 9 (small); zlib's and numpy's default is 6
};

// Writes every tensor as `NAME.npy` atomically (see atomic_file.h). Entries
// carry the fixed date 1980-01-01 like numpy's, so equal tensors give equal
// files. The archive is built in memory first (peak memory about twice the
// data). Errors: kInvalidArgument for empty names, kUnsupported for strings.
Status WriteNpz(const std::filesystem::path& path, const TensorSet& tensors,
                const NpzWriteOptions& options = {});

}  // namespace parity
