#include "core/json_in.h"

#include <fmt/format.h>

#include <algorithm>

namespace parity {

namespace {

// What nlohmann::json allocates, roughly (64-bit, libstdc++): a value is 16
// bytes in its parent's vector (capacity up to twice the size); an array or
// object adds its heap header; an object member adds a map node and its key.
constexpr int64_t kBytesPerValue = 32;
constexpr int64_t kBytesPerContainer = 64;
constexpr int64_t kBytesPerMember = 96;
constexpr int64_t kBytesPerString = 32;

}  // namespace

JsonCost EstimateJsonCost(std::string_view text) {
  JsonCost cost;
  int depth = 0;
  int64_t values = 1, containers = 0, members = 0, strings = 0, string_bytes = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case '[':
      case '{':
        ++containers;
        cost.max_depth = std::max(cost.max_depth, ++depth);
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ',':
        ++values;
        break;
      case ':':
        ++members;
        break;
      case '"': {
        ++strings;
        const size_t start = ++i;
        while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
        string_bytes += static_cast<int64_t>(std::min(i, text.size()) - start);
        break;
      }
      default:
        break;
    }
  }
  cost.estimated_bytes = values * kBytesPerValue + containers * kBytesPerContainer + members * kBytesPerMember +
                         strings * kBytesPerString + string_bytes;
  return cost;
}

Status CheckJsonBudget(std::string_view text, const std::string& what) {
  const JsonCost cost = EstimateJsonCost(text);
  if (cost.max_depth > kMaxJsonDepth)
    return InvalidArgument(fmt::format("{}: JSON nested {} levels deep (parity reads at most {})", what,
                                       cost.max_depth, kMaxJsonDepth));
  const int64_t budget = kJsonBudgetFactor * static_cast<int64_t>(text.size()) + kJsonBudgetFloorBytes;
  if (cost.estimated_bytes > budget) {
    const auto mib = [](int64_t b) { return static_cast<double>(b) / (1 << 20); };
    return InvalidArgument(fmt::format(
        "{}: {:.1f} MiB of JSON would take about {:.0f} MiB to parse, more than the {:.0f} MiB allowed "
        "({}x its size + {} MiB): too many small values",
        what, mib(static_cast<int64_t>(text.size())), mib(cost.estimated_bytes), mib(budget), kJsonBudgetFactor,
        kJsonBudgetFloorBytes >> 20));
  }
  return {};
}

namespace {

template <typename Json>
Result<Json> Parse(std::string_view text, const std::string& what) {
  PARITY_RETURN_IF_ERROR(CheckJsonBudget(text, what));
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() carries the position: "parse error at line 3, column 5: ...".
    return InvalidArgument(fmt::format("{}: not valid JSON: {}", what, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // A number past double's range (1e999) is out_of_range.406, not a
    // parse_error (found by fuzz/baseline_manifest_fuzz.cc).
    return InvalidArgument(fmt::format("{}: not valid JSON: {}", what, e.what()));
  }
}

}  // namespace

Result<nlohmann::json> ParseJsonBounded(std::string_view text, const std::string& what) {
  return Parse<nlohmann::json>(text, what);
}

Result<nlohmann::ordered_json> ParseOrderedJsonBounded(std::string_view text, const std::string& what) {
  return Parse<nlohmann::ordered_json>(text, what);
}

}  // namespace parity
