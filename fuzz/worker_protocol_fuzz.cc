// The one worker protocol (src/core/worker_protocol.h), both directions, as
// the runner-worker, the dataset-worker and the corpus-worker speak it:
// - a request line either parses to an index of at most 2^53 and a
//   non-empty path without NUL that formats back to the same record, or is
//   refused with one line; a path formatted from any bytes is one line and
//   reads back exactly;
// - a reply line either parses to a line that formats back to one of the
//   same kind and index (a control line within kMaxWorkerLineBytes), or is
//   refused with one line; any bytes formatted as a failure's id and
//   message or as a ready line's facts are one line within the bound and
//   parse to their kind;
// - the input as a worker's stdin: ReadBoundedLine never holds a line past
//   its bound, each line a record or refused; as a worker's stdout: each
//   line parsed or refused.
#include <sstream>
#include <string>
#include <string_view>

#include "core/worker_protocol.h"
#include "fuzz/fuzz_util.h"

namespace {

using namespace parity;

// Every error is one non-empty line.
template <typename R>
void OneLine(const R& r) {
  fuzz::CheckError(r);
  if (!r && r.error().message().find('\n') != std::string::npos) fuzz::Fail("an error message spans lines");
}

void Requests(std::string_view line) {
  auto r = ParseEntryRecord(line);
  OneLine(r);
  if (r) {
    if (r->index > kMaxEntryIndex || r->path.empty() || r->path.find('\0') != std::string::npos)
      fuzz::Fail("accepted an index or a path it must refuse");
    auto again = ParseEntryRecord(FormatEntryRecord(r->index, r->path));
    if (!again || again->index != r->index || again->path != r->path) fuzz::Fail("a record does not round-trip");
  }
  // The input as a path: formatted, it is one line and reads back exactly.
  if (!line.empty() && line.size() <= 4096 && line.find('\0') == std::string_view::npos) {
    const std::string formatted = FormatEntryRecord(line.size(), line);
    if (formatted.find('\n') != std::string::npos || formatted.find('\r') != std::string::npos)
      fuzz::Fail("a formatted record spans lines");
    auto back = ParseEntryRecord(formatted);
    if (!back || back->path != line || back->index != line.size()) fuzz::Fail("a formatted path does not read back");
  }
}

void Replies(std::string_view line) {
  auto r = ParseWorkerLine(line);
  OneLine(r);
  if (!r || r->kind == WorkerLine::Kind::kRow) return;
  if (line.size() > kMaxWorkerLineBytes) fuzz::Fail("accepted a control line past the bound");
  if (r->index > kMaxEntryIndex) fuzz::Fail("accepted an index past 2^53");
  std::string again;
  switch (r->kind) {
    case WorkerLine::Kind::kReady: again = FormatReadyLine(r->facts); break;
    case WorkerLine::Kind::kDone: again = FormatDoneLine(r->index); break;
    case WorkerLine::Kind::kFailed: again = FormatFailedLine(r->index, r->id, r->why); break;
    case WorkerLine::Kind::kRow: break;
  }
  auto back = ParseWorkerLine(again);
  if (!back || back->kind != r->kind || back->index != r->index || back->facts.size() != r->facts.size())
    fuzz::Fail("a reply does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  Requests(line);
  Replies(line);
  // Any bytes as a failure's id and message, or as a ready line's facts:
  // one line within the bound, of its kind.
  const std::string any(line);
  for (const std::string& formatted : {FormatFailedLine(size, any, any), FormatReadyLine({any, any})}) {
    if (formatted.find('\n') != std::string::npos || formatted.size() > kMaxWorkerLineBytes)
      fuzz::Fail("a formatted reply spans lines or passes the bound");
    auto parsed = ParseWorkerLine(formatted);
    if (!parsed || parsed->kind == WorkerLine::Kind::kRow) fuzz::Fail("a formatted reply does not parse");
  }
  // The input as a worker's stdin, and as a worker's stdout.
  std::istringstream in{any};
  std::string request;
  for (bool too_long = false; ReadBoundedLine(in, request, 64, too_long);) {
    if (request.size() > 64) fuzz::Fail("a bounded line passed its bound");
    if (too_long) break;
    OneLine(ParseEntryRecord(request));
  }
  std::istringstream out{any};
  for (std::string reply; std::getline(out, reply);) OneLine(ParseWorkerLine(reply));
  return 0;
}
