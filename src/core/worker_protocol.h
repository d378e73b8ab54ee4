// parity's one worker protocol (issue 55 item 4): the lines between a parent
// and each of its hidden workers, `parity runner-worker` (a child runner,
// engine/runner/runner_worker.h), `parity dataset-worker` and `parity
// corpus-worker` (a Ray actor's, engine/ray/dataset_worker.h,
// corpus_worker.h). One grammar, one parser for each direction, one fuzz
// target (fuzz/worker_protocol_fuzz.cc); python/parity/_worker_protocol.py
// speaks the same lines for the Ray actors, and both are held to the same
// verdicts on tests/fixtures/worker_lines.json.
//
// Requests, parent to worker, one a line: a framed entry record, one JSON
// object on one line, nothing else:
//   {"index":7,"path_hex":"2f646174612f73303037"}
// `index` is the entry's position (unique in a list, at most 2^53 so that
// Python and JSON read it exactly); `path_hex` is the path's bytes in
// lowercase hex, so that a file name holding a newline, a `\r`, a tab or
// bytes that are not UTF-8 is carried exactly and can never split a line.
// The path is a dataset entry (dataset-worker; the Ray driver's entry list is
// the same records, forwarded unchanged), a job folder (runner-worker) or
// unused (corpus-worker: the index is a prompt's).
//
// Replies, worker to parent, one a line, cells separated by tabs:
//   O<TAB>FACT...              first, once: the worker is ready; its facts
//                              (runner-worker: the ORT version and library;
//                              dataset-worker: the outputs it judges; corpus-worker: 0)
//   B<TAB>INDEX<TAB>ID<TAB>WHY  a failure within entry INDEX: ID is a sample's
//                              (dataset-worker) or "job", the whole request
//   ROW                        any other line: a row of the entry's result,
//                              the worker's own (the dataset's "R<TAB>..." rows,
//                              the corpus's JSON rows), passed on as it is
//   E<TAB>INDEX                entry INDEX is answered: the lines since the
//                              previous E (or the ready line) are its
// A runner-worker answers a request with "E" alone, or "B ... job ..." then
// "E"; a dataset-worker with its rows (R and B lines) then "E".
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity {

// A record line longer than this is refused before it is parsed (a path is
// at most PATH_MAX, 4096 bytes: 8192 hex digits).
inline constexpr size_t kMaxEntryRecordBytes = 16 * 1024;
inline constexpr uint64_t kMaxEntryIndex = uint64_t{1} << 53;
// A reply line the parent reads is at most this long (a control line always
// is: each cell a worker formats is cut to kMaxWorkerCellBytes).
inline constexpr size_t kMaxWorkerLineBytes = 64 * 1024;
inline constexpr size_t kMaxWorkerCellBytes = 16 * 1024;
// The ID of a failure that is the whole request's, not one sample's.
inline constexpr std::string_view kWholeJob = "job";

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

struct WorkerLine {
  enum class Kind { kReady, kFailed, kRow, kDone };
  Kind kind = Kind::kRow;
  uint64_t index = 0;              // kFailed, kDone
  std::vector<std::string> facts;  // kReady: at least one
  std::string id, why;             // kFailed
};

// The reply lines, without their newline. Tabs, newlines and carriage
// returns in a cell become spaces; a cell is cut to kMaxWorkerCellBytes
// (with "..."), so that the line fits kMaxWorkerLineBytes.
std::string FormatReadyLine(const std::vector<std::string>& facts);
std::string FormatFailedLine(uint64_t index, std::string_view id, std::string_view why);
std::string FormatDoneLine(uint64_t index);

// One reply line (without its newline). A line that starts with O, B or E
// followed by a tab or nothing is a control line and must be one of the
// above: kInvalidArgument, one line quoting at most its first bytes, when it
// is longer than kMaxWorkerLineBytes, has too few or too many cells, or an
// index that is not a decimal integer of at most 2^53. Any other non-empty
// line is a kRow, whatever its length (its reader bounds it); an empty line
// is refused.
Result<WorkerLine> ParseWorkerLine(std::string_view line);

}  // namespace parity
