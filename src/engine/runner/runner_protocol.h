// The lines of `parity runner-worker` (runner_worker.h), both ways, with
// their bounds (issue 56). The parent sends a request per job: a framed
// record (core/entry_record.h, the dataset worker's and the Ray entry list's
// one parser) of the job's index and folder, at most kMaxEntryRecordBytes.
// The child answers, one line of at most kMaxRunnerReplyBytes each:
//   O<TAB>VERSION<TAB>LIBRARY   first: ready, the ORT it loaded
//   E<TAB>INDEX                 job INDEX done: its folder holds outputs.npz
//   B<TAB>INDEX<TAB>job<TAB>MESSAGE   job INDEX failed (one line)
// A message longer than kMaxRunnerMessageBytes is cut, so that a reply the
// child formats always fits; the parent refuses (and stops the child on) a
// longer line. Needs only core (fuzz/runner_protocol_fuzz.cc links it alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

inline constexpr size_t kMaxRunnerReplyBytes = 64 * 1024;
// How long a child may take from its start to its ready line (loading its
// runtime library); PARITY_RUNNER_START_TIMEOUT (seconds) overrides it.
inline constexpr int kRunnerStartSeconds = 60;
inline constexpr size_t kMaxRunnerMessageBytes = 16 * 1024;

struct RunnerReply {
  enum class Kind { kReady, kDone, kFailed };
  Kind kind = Kind::kReady;
  uint64_t index = 0;   // kDone, kFailed
  std::string version;  // kReady
  std::string library;  // kReady
  std::string message;  // kFailed
};

// The reply lines, without their newline. Tabs, newlines and carriage
// returns in a field become spaces; version, library and message are cut to
// kMaxRunnerMessageBytes.
std::string FormatReadyReply(std::string_view version, std::string_view library);
std::string FormatDoneReply(uint64_t index);
std::string FormatFailedReply(uint64_t index, std::string_view message);

// One reply line (without its newline). kInvalidArgument, one line quoting
// at most the line's first bytes, for anything else: longer than
// kMaxRunnerReplyBytes, an unknown kind, a missing field, an index that is
// not a decimal integer of at most 2^53.
Result<RunnerReply> ParseRunnerReply(std::string_view line);

}  // namespace parity
