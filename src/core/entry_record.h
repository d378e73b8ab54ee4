// A framed record: an index and a path on one line. The one request line of
// parity's two worker protocols: a dataset entry as the Ray engine passes it
// on (docs/dataset.md), a line of the entry list the command writes for the
// Python driver, which forwards it unchanged as a request line of `parity
// dataset-worker`; and a job folder sent to `parity runner-worker`
// (engine/runner/runner_protocol.h). One JSON object on one line, nothing else:
//   {"index":7,"path_hex":"2f646174612f73303037"}
// `index` is the entry's position (unique in a list, at most 2^53 so that
// Python and JSON read it exactly); `path_hex` is the path's bytes in
// lowercase hex, so that a file name holding a newline, a `\r`, a tab or
// bytes that are not UTF-8 is carried exactly and can never split a line.
// Fuzzed: fuzz/entry_record_fuzz.cc, fuzz/runner_protocol_fuzz.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

// A record line longer than this is refused before it is parsed (a path is
// at most PATH_MAX, 4096 bytes: 8192 hex digits).
inline constexpr size_t kMaxEntryRecordBytes = 16 * 1024;
inline constexpr uint64_t kMaxEntryIndex = uint64_t{1} << 53;

struct EntryRecord {
  uint64_t index = 0;
  std::string path;  // the bytes, decoded
};

// The record's line, without its newline.
std::string FormatEntryRecord(uint64_t index, std::string_view path);

// Parses one line (without its newline). kInvalidArgument, one line saying
// what is wrong, for anything but a record above: too long, not one JSON
// object, other keys, an index that is not an integer in [0, 2^53], a path
// that is empty, holds a NUL, or is not an even number of hex digits.
Result<EntryRecord> ParseEntryRecord(std::string_view line);

// Reads one line of at most `max` bytes from `in` (its newline dropped): a
// worker's request line. False at the end of the input; `too_long` when a
// line goes past `max` (what was read is dropped: a line is never held whole
// beyond the bound, and the caller ends).
bool ReadBoundedLine(std::istream& in, std::string& line, size_t max, bool& too_long);

}  // namespace parity
