#include "core/entry_record.h"

#include <fmt/format.h>

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

}  // namespace parity
