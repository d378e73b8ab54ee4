#include "engine/runner/runner_protocol.h"

#include <fmt/format.h>

#include <charconv>

#include "core/entry_record.h"

namespace parity {
namespace {

// One field whatever it holds: tabs and newlines would break the framing.
std::string Field(std::string_view s) {
  std::string out(s.substr(0, kMaxRunnerMessageBytes));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > kMaxRunnerMessageBytes) out += "...";
  return out;
}

// The line's first bytes for a message, controls shown as '?'.
std::string Quote(std::string_view line) {
  std::string out(line.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return line.size() > 64 ? out + "..." : out;
}

std::unexpected<Error> Bad(std::string_view line, std::string_view why) {
  return InvalidArgument(fmt::format("runner-worker: reply '{}': {}", Quote(line), why));
}

bool ParseIndex(std::string_view s, uint64_t& index) {
  if (s.empty() || s.size() > 16 || s.front() < '0' || s.front() > '9') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), index);
  return ec == std::errc() && end == s.data() + s.size() && index <= kMaxEntryIndex;
}

}  // namespace

std::string FormatReadyReply(std::string_view version, std::string_view library) {
  return fmt::format("O\t{}\t{}", Field(version), Field(library));
}

std::string FormatDoneReply(uint64_t index) { return fmt::format("E\t{}", index); }

std::string FormatFailedReply(uint64_t index, std::string_view message) {
  return fmt::format("B\t{}\tjob\t{}", index, Field(message));
}

Result<RunnerReply> ParseRunnerReply(std::string_view line) {
  if (line.size() > kMaxRunnerReplyBytes)
    return Bad(line, fmt::format("longer than {} bytes", kMaxRunnerReplyBytes));
  if (line.size() < 2 || line[1] != '\t') return Bad(line, "not a reply (O, E or B and a tab)");
  const char kind = line[0];
  std::string_view rest = line.substr(2);
  RunnerReply r;
  if (kind == 'O') {
    const size_t tab = rest.find('\t');
    if (tab == std::string_view::npos || rest.find('\t', tab + 1) != std::string_view::npos)
      return Bad(line, "a ready line has two fields, the version and the library");
    r.kind = RunnerReply::Kind::kReady;
    r.version = rest.substr(0, tab);
    r.library = rest.substr(tab + 1);
    return r;
  }
  if (kind == 'E') {
    r.kind = RunnerReply::Kind::kDone;
    if (!ParseIndex(rest, r.index)) return Bad(line, "the index is not an integer of at most 2^53");
    return r;
  }
  if (kind == 'B') {
    const size_t tab = rest.find('\t');
    if (tab == std::string_view::npos || !ParseIndex(rest.substr(0, tab), r.index))
      return Bad(line, "the index is not an integer of at most 2^53");
    rest.remove_prefix(tab + 1);
    if (!rest.starts_with("job\t")) return Bad(line, "a failure names no job");
    r.kind = RunnerReply::Kind::kFailed;
    r.message = rest.substr(4);
    return r;
  }
  return Bad(line, "not a reply (O, E or B and a tab)");
}

}  // namespace parity
