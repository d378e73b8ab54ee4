#include "core/worker_protocol.h"

#include <fmt/format.h>

#include <charconv>

#include "core/json_in.h"

namespace parity {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::unexpected<Error> Bad(std::string_view why) {
  return InvalidArgument(fmt::format("an entry record {} (expected {{\"index\":N,\"path_hex\":\"...\"}})", why));
}

// One cell whatever it holds: tabs and newlines would break the framing.
std::string Cell(std::string_view s) {
  std::string out(s.substr(0, kMaxWorkerCellBytes));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > kMaxWorkerCellBytes) out += "...";
  return out;
}

// The line's first bytes for a message, controls shown as '?'.
std::string Quote(std::string_view line) {
  std::string out(line.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return line.size() > 64 ? out + "..." : out;
}

std::unexpected<Error> BadLine(std::string_view line, std::string_view why) {
  return InvalidArgument(fmt::format("worker line '{}': {}", Quote(line), why));
}

bool ParseIndex(std::string_view s, uint64_t& index) {
  if (s.empty() || s.size() > 16 || s.front() < '0' || s.front() > '9') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), index);
  return ec == std::errc() && end == s.data() + s.size() && index <= kMaxEntryIndex;
}

std::vector<std::string_view> Cells(std::string_view line) {
  std::vector<std::string_view> cells;
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    cells.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return cells;
    start = tab + 1;
  }
}

}  // namespace

std::string FormatEntryRecord(uint64_t index, std::string_view path) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = fmt::format("{{\"index\":{},\"path_hex\":\"", index);
  out.reserve(out.size() + 2 * path.size() + 2);
  for (unsigned char c : path) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  out += "\"}";
  return out;
}

Result<EntryRecord> ParseEntryRecord(std::string_view line) {
  if (line.size() > kMaxEntryRecordBytes)
    return Bad(fmt::format("of {} bytes is longer than {}", line.size(), kMaxEntryRecordBytes));
  auto parsed = ParseJsonBounded(line, "entry record");
  if (!parsed) return Bad("is not JSON");
  const nlohmann::json& j = *parsed;
  if (!j.is_object() || j.size() != 2 || !j.contains("index") || !j.contains("path_hex"))
    return Bad("is not an object of exactly index and path_hex");
  const nlohmann::json& index = j["index"];
  if (!index.is_number_unsigned() || index.get<uint64_t>() > kMaxEntryIndex)
    return Bad("has an index that is not an integer from 0 to 2^53");
  const nlohmann::json& hex = j["path_hex"];
  if (!hex.is_string()) return Bad("has a path_hex that is not a string");
  const std::string& digits = hex.get_ref<const std::string&>();
  if (digits.empty() || digits.size() % 2 != 0) return Bad("has a path_hex that is empty or of odd length");
  EntryRecord r{.index = index.get<uint64_t>()};
  r.path.reserve(digits.size() / 2);
  for (size_t i = 0; i < digits.size(); i += 2) {
    const int hi = HexDigit(digits[i]), lo = HexDigit(digits[i + 1]);
    if (hi < 0 || lo < 0) return Bad("has a path_hex that is not lowercase hex");
    const char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') return Bad("has a path holding a NUL byte");
    r.path.push_back(c);
  }
  return r;
}

bool ReadBoundedLine(std::istream& in, std::string& line, size_t max, bool& too_long) {
  line.clear();
  too_long = false;
  for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (line.size() >= max) {
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

std::string FormatReadyLine(const std::vector<std::string>& facts) {
  std::string out = "O";
  for (const std::string& f : facts) out += "\t" + Cell(f);
  if (facts.empty()) out += "\t";  // one empty fact: a ready line has at least one
  return out;
}

std::string FormatFailedLine(uint64_t index, std::string_view id, std::string_view why) {
  return fmt::format("B\t{}\t{}\t{}", index, Cell(id), Cell(why));
}

std::string FormatDoneLine(uint64_t index) { return fmt::format("E\t{}", index); }

Result<WorkerLine> ParseWorkerLine(std::string_view line) {
  if (line.empty()) return BadLine(line, "an empty line");
  const char kind = line[0];
  const bool control = (kind == 'O' || kind == 'B' || kind == 'E') && (line.size() == 1 || line[1] == '\t');
  if (!control) return WorkerLine{};  // a row: the worker's own, passed on
  if (line.size() > kMaxWorkerLineBytes) return BadLine(line, fmt::format("longer than {} bytes", kMaxWorkerLineBytes));
  const std::vector<std::string_view> cells = Cells(line);
  WorkerLine r;
  if (kind == 'O') {
    if (cells.size() < 2) return BadLine(line, "a ready line names at least one fact");
    r.kind = WorkerLine::Kind::kReady;
    r.facts.assign(cells.begin() + 1, cells.end());
    return r;
  }
  if (kind == 'E') {
    if (cells.size() != 2 || !ParseIndex(cells[1], r.index))
      return BadLine(line, "an end line is E and an index, an integer of at most 2^53");
    r.kind = WorkerLine::Kind::kDone;
    return r;
  }
  if (cells.size() != 4 || !ParseIndex(cells[1], r.index))
    return BadLine(line, "a failure line is B, an index (an integer of at most 2^53), an id and a message");
  r.kind = WorkerLine::Kind::kFailed;
  r.id = cells[2];
  r.why = cells[3];
  return r;
}

}  // namespace parity
