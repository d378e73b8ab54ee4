// The command line's forms of sample_gen.h's options: kinds, --shape, --dim,
// --range; the sample kinds' names.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/inputs/sample_gen.h"

namespace parity {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<int64_t> ParseCount(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> ParseFiniteDouble(std::string_view s) {
  std::string copy(Trim(s));
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string_view SampleKindName(SampleKind kind) {
  switch (kind) {
    case SampleKind::kTypical:
      return "typical";
    case SampleKind::kBoundary:
      return "boundary";
    case SampleKind::kAnomaly:
      return "anomaly";
    case SampleKind::kUser:
      return "user";
  }
  return "user";
}

SampleKind SampleKindOf(std::string_view name) {
  if (name == "typical") return SampleKind::kTypical;
  if (name.starts_with("boundary_")) return SampleKind::kBoundary;
  if (name.starts_with("anomaly_")) return SampleKind::kAnomaly;
  return SampleKind::kUser;
}

Result<std::vector<SampleKind>> ParseSampleKinds(std::string_view text) {
  std::vector<SampleKind> kinds;
  auto add = [&kinds](SampleKind k) {
    for (SampleKind have : kinds)
      if (have == k) return;
    kinds.push_back(k);
  };
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view token = Trim(rest.substr(0, comma));
    if (token == "typical") {
      add(SampleKind::kTypical);
    } else if (token == "boundary") {
      add(SampleKind::kBoundary);
    } else if (token == "anomaly") {
      add(SampleKind::kAnomaly);
    } else if (token == "all") {
      add(SampleKind::kTypical);
      add(SampleKind::kBoundary);
      add(SampleKind::kAnomaly);
    } else {
      return InvalidArgument(fmt::format(
          "--kind '{}': unknown kind '{}' (expected typical, boundary, anomaly or all)", text, token));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return kinds;
}

Result<std::pair<std::string, std::vector<DimSpec>>> ParseShapeOverride(std::string_view text) {
  auto bad = [text](std::string_view why) {
    return InvalidArgument(
        fmt::format("--shape '{}': {} (expected NAME:DIMxDIMx..., e.g. images:1x3xHxW)", text, why));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no ':'");
  std::string name(Trim(text.substr(0, colon)));
  if (name.empty()) return bad("no input name");
  std::string_view dims_text = Trim(text.substr(colon + 1));
  std::vector<DimSpec> dims;
  if (dims_text.empty()) return bad("no dims");
  // "scalar" is the rank-0 shape.
  if (dims_text == "scalar") return std::pair{name, dims};
  while (true) {
    size_t x = dims_text.find('x');
    // 'x' always separates: a symbol cannot contain it ("HxW", not "max_len").
    std::string_view token = dims_text.substr(0, x);
    token = Trim(token);
    if (token.empty()) return bad("empty dim");
    if (auto v = ParseCount(token)) {
      dims.push_back({.value = *v, .symbol = {}});
    } else if (IsIdentifier(token)) {
      dims.push_back({.value = -1, .symbol = std::string(token)});
    } else {
      return bad(fmt::format("dim '{}' is neither a number >= 0 nor a symbol", token));
    }
    if (x == std::string_view::npos) break;
    dims_text = dims_text.substr(x + 1);
  }
  return std::pair{name, dims};
}

Result<std::pair<std::string, int64_t>> ParseDimOverride(std::string_view text) {
  size_t eq = text.find('=');
  std::string symbol(Trim(text.substr(0, eq)));
  if (eq == std::string_view::npos || !IsIdentifier(symbol))
    return InvalidArgument(fmt::format("--dim '{}': expected SYMBOL=SIZE, e.g. batch=4", text));
  auto v = ParseCount(Trim(text.substr(eq + 1)));
  if (!v) return InvalidArgument(fmt::format("--dim '{}': size must be a number >= 0", text));
  return std::pair{symbol, *v};
}

Result<std::pair<std::string, ValueRange>> ParseRangeOverride(std::string_view text) {
  size_t colon = text.rfind(':');
  size_t comma = text.rfind(',');
  if (colon == std::string_view::npos || comma == std::string_view::npos || comma < colon)
    return InvalidArgument(fmt::format("--range '{}': expected NAME:LO,HI, e.g. images:-1,1", text));
  std::string name(Trim(text.substr(0, colon)));
  auto lo = ParseFiniteDouble(text.substr(colon + 1, comma - colon - 1));
  auto hi = ParseFiniteDouble(text.substr(comma + 1));
  if (name.empty() || !lo || !hi)
    return InvalidArgument(fmt::format("--range '{}': expected NAME:LO,HI with finite numbers", text));
  if (!(*lo < *hi)) return InvalidArgument(fmt::format("--range '{}': LO must be below HI", text));
  return std::pair{name, ValueRange{*lo, *hi}};
}

}  // namespace parity
