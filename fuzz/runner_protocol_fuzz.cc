// The runner-worker's lines (src/engine/runner/runner_protocol.h), both
// ways: a reply line either parses to what formats back to a reply of the
// same meaning, or is refused with one line; a request line is the framed
// entry record (core/entry_record.h, the same parser as the Ray entry list
// and the dataset worker's requests), read only up to its bound.
#include <sstream>
#include <string>
#include <string_view>

#include "core/entry_record.h"
#include "engine/runner/runner_protocol.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto r = ParseRunnerReply(line);
  fuzz::CheckError(r);
  if (r) {
    std::string again;
    switch (r->kind) {
      case RunnerReply::Kind::kReady: again = FormatReadyReply(r->version, r->library); break;
      case RunnerReply::Kind::kDone: again = FormatDoneReply(r->index); break;
      case RunnerReply::Kind::kFailed: again = FormatFailedReply(r->index, r->message); break;
    }
    if (r->kind != RunnerReply::Kind::kReady && r->index > kMaxEntryIndex) fuzz::Fail("accepted an index past 2^53");
    auto back = ParseRunnerReply(again);
    if (!back || back->kind != r->kind || back->index != r->index) fuzz::Fail("a reply does not round-trip");
  }
  // Any bytes as a failure message or a library: one reply line within the bound.
  for (const std::string& formatted : {FormatFailedReply(size, line), FormatReadyReply(line, line)}) {
    if (formatted.find('\n') != std::string::npos || formatted.size() > kMaxRunnerReplyBytes)
      fuzz::Fail("a formatted reply spans lines or passes the bound");
    if (!ParseRunnerReply(formatted)) fuzz::Fail("a formatted reply does not parse");
  }
  // The input as a worker's stdin: lines read within the bound, each a record or refused.
  std::istringstream in{std::string(line)};
  std::string request;
  for (bool too_long = false; ReadBoundedLine(in, request, 64, too_long);) {
    if (request.size() > 64) fuzz::Fail("a bounded line passed its bound");
    if (too_long) break;
    fuzz::CheckError(ParseEntryRecord(request));
  }
  return 0;
}
