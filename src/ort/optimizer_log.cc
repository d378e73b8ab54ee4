#include "ort/optimizer_log.h"

#include <algorithm>
#include <charconv>

namespace parity::ort {

std::optional<OptimizerEvent> ParseOptimizerLine(std::string_view line) {
  constexpr std::string_view kPrefix = "GraphTransformer ";
  constexpr std::string_view kModified = " modified: ";
  const size_t start = line.find(kPrefix);
  if (start == std::string_view::npos) return std::nullopt;
  line.remove_prefix(start + kPrefix.size());
  const size_t mid = line.find(kModified);
  if (mid == 0 || mid == std::string_view::npos) return std::nullopt;
  const std::string_view name = line.substr(0, mid);
  if (name.find(' ') != std::string_view::npos) return std::nullopt;
  const std::string_view rest = line.substr(mid + kModified.size());
  int count = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), count);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  return OptimizerEvent{.name = std::string(name), .modified = count != 0};
}

std::vector<std::string> ModifiedOptimizers(const std::vector<std::string>& lines) {
  std::vector<std::string> names;
  for (const std::string& line : lines) {
    const auto event = ParseOptimizerLine(line);
    if (!event || !event->modified) continue;
    if (std::find(names.begin(), names.end(), event->name) == names.end()) names.push_back(event->name);
  }
  return names;
}

}  // namespace parity::ort
