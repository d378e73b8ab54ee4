// Input roles and size relations for generated samples (issue 41): what an
// input means (ids, a mask, positions, a KV cache, a count, an image) sets
// its values, and which sizes must move together (one past for every cache;
// a mask as long as the past and the new tokens) sets its shape. Names are
// hints, used only where the graph says nothing (docs/inputs.md).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "engine/inputs/sample_values.h"

namespace parity {

std::string_view InputRoleName(InputRole role) {
  switch (role) {
    case InputRole::kIds:
      return "ids";
    case InputRole::kMask:
      return "mask";
    case InputRole::kPositions:
      return "positions";
    case InputRole::kCache:
      return "cache";
    case InputRole::kCount:
      return "count";
    case InputRole::kImage:
      return "image";
    case InputRole::kOther:
      break;
  }
  return "other";
}

Result<std::pair<std::string, InputRole>> ParseRoleOverride(std::string_view text) {
  const size_t eq = text.rfind('=');
  const std::string name(text.substr(0, eq == std::string_view::npos ? 0 : eq));
  const std::string_view word = eq == std::string_view::npos ? "" : text.substr(eq + 1);
  for (InputRole r : {InputRole::kOther, InputRole::kIds, InputRole::kMask, InputRole::kPositions,
                      InputRole::kCache, InputRole::kCount, InputRole::kImage})
    if (!name.empty() && word == InputRoleName(r)) return std::pair{name, r};
  return InvalidArgument(fmt::format(
      "--role '{}': expected NAME=ROLE, ROLE one of ids, mask, positions, cache, count, image, other", text));
}

namespace sample_internal {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Has(const std::string& lowered, std::string_view word) { return lowered.find(word) != std::string::npos; }

// The role a name and a type suggest (transformers' and the exporters'
// names: input_ids, attention_mask, position_ids, past_key_values.0.key,
// past_key_0, pixel_values, images).
InputRole RoleFromName(const InputPlan& in) {
  const std::string n = Lower(in.name);
  const bool is_int = IsInteger(in.dtype) || in.dtype == DType::kBool;
  if (is_int && Has(n, "mask")) return InputRole::kMask;
  if (IsInteger(in.dtype) && Has(n, "position")) return InputRole::kPositions;
  if (IsInteger(in.dtype) && (n.ends_with("ids") || Has(n, "token"))) return InputRole::kIds;
  if (IsFloating(in.dtype) && in.axes.size() >= 3 &&
      (Has(n, "past") || Has(n, "cache") || Has(n, "key_values")))
    return InputRole::kCache;
  if (IsFloating(in.dtype) && in.axes.size() == 4 && (Has(n, "image") || Has(n, "pixel"))) return InputRole::kImage;
  return InputRole::kOther;
}

// A cache of cross-attention holds the encoder's length, not the past.
bool IsCrossCache(const InputPlan& in) {
  const std::string n = Lower(in.name);
  return Has(n, "encoder") || Has(n, "cross");
}

// The last dynamic axis symbol of `in`; empty when none.
std::string LastSymbol(const InputPlan& in) {
  return !in.axes.empty() ? in.axes.back().symbol : std::string();
}

// The caches' length symbol: each cache's first dynamic axis that is not
// batch-like ([batch, heads, past, head_dim] and [batch, past, ...] alike).
std::vector<std::string> PastSymbols(const std::vector<InputPlan>& inputs, const std::set<std::string>& batch_like) {
  std::vector<std::string> found;
  for (const auto& in : inputs) {
    if (in.role != InputRole::kCache || IsCrossCache(in)) continue;
    for (const auto& a : in.axes)
      if (!a.symbol.empty() && !batch_like.contains(a.symbol)) {
        found.push_back(a.symbol);
        break;
      }
  }
  return found;
}

}  // namespace

void AssignRoles(std::vector<InputPlan>& inputs, const std::map<std::string, InputRole>& given) {
  for (auto& in : inputs) {
    if (auto it = given.find(in.name); it != given.end()) {
      in.role = it->second;
      in.count = in.role == InputRole::kCount;
      if (in.role != InputRole::kIds) in.vocab = 0;
      continue;
    }
    in.role = in.vocab > 0 ? InputRole::kIds : in.count ? InputRole::kCount : RoleFromName(in);
    // A position read through an embedding (GPT-2's wpe) is a position, not a
    // token id: it continues after the past (issue 51).
    if (in.vocab > 0 && Has(Lower(in.name), "position")) in.role = InputRole::kPositions, in.vocab = 0;
  }
}

std::vector<std::string> Relations::Describe() const {
  std::vector<std::string> lines;
  for (const auto& [symbol, other] : same) lines.push_back(fmt::format("{} = {}", symbol, other));
  for (const auto& [symbol, ab] : sums) lines.push_back(fmt::format("{} = {} + {}", symbol, ab.first, ab.second));
  return lines;
}

Relations FindRelations(const std::vector<InputPlan>& inputs, const std::set<std::string>& batch_like,
                        const std::map<std::string, int64_t>& traced) {
  Relations r;
  for (const auto& in : inputs)
    if ((in.role == InputRole::kIds || in.role == InputRole::kPositions) && in.axes.size() >= 2 &&
        !LastSymbol(in).empty() && !batch_like.contains(LastSymbol(in))) {
      r.seq = LastSymbol(in);
      break;
    }
  const auto pasts = PastSymbols(inputs, batch_like);
  if (!pasts.empty()) r.past = pasts.front();
  auto traced_size = [&](const std::string& s) -> int64_t {
    auto it = traced.find(s);
    return it == traced.end() ? -1 : it->second;
  };
  auto keep = [&](const std::string& symbol, int64_t expected) {
    const int64_t t = traced_size(symbol);
    return t < 0 || expected < 0 || t == expected;
  };
  for (const auto& p : pasts)
    if (p != r.past && keep(p, traced_size(r.past))) r.same[p] = r.past;
  for (const auto& in : inputs) {
    const std::string len = LastSymbol(in);
    if (in.role != InputRole::kMask || len.empty() || len == r.seq || len == r.past || r.seq.empty()) continue;
    if (r.same.contains(len) || r.sums.contains(len)) continue;
    if (!r.past.empty()) {
      const int64_t p = traced_size(r.past), s = traced_size(r.seq);
      if (keep(len, p < 0 || s < 0 ? -1 : p + s)) r.sums[len] = {r.past, r.seq};
    } else if (keep(len, traced_size(r.seq))) {
      r.same[len] = r.seq;
    }
  }
  return r;
}

void ApplyRelations(const Relations& relations, std::map<std::string, int64_t>& sizes) {
  for (const auto& [symbol, other] : relations.same)
    if (sizes.contains(other)) sizes[symbol] = sizes.at(other);
  for (const auto& [symbol, ab] : relations.sums)
    if (sizes.contains(ab.first) && sizes.contains(ab.second))
      sizes[symbol] = sizes.at(ab.first) + sizes.at(ab.second);
}

namespace {

std::optional<int64_t> Given(const std::map<std::string, int64_t>& m, const std::string& s) {
  auto it = m.find(s);
  return it == m.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

}  // namespace

Result<std::map<std::string, int64_t>> KeepRelations(const Relations& relations,
                                                     const std::map<std::string, int64_t>& given) {
  std::map<std::string, int64_t> dims = given;
  for (const auto& [symbol, other] : relations.same) {
    const auto a = Given(dims, symbol), b = Given(dims, other);
    if (a && b && *a != *b)
      return InvalidArgument(fmt::format("--dim {}={} and --dim {}={}: the two are one size ({} = {}); give one",
                                         symbol, *a, other, *b, symbol, other));
    if (a && !b) dims[other] = *a;
  }
  for (const auto& [symbol, ab] : relations.sums) {
    const auto total = Given(dims, symbol);
    if (!total) continue;
    const auto a = Given(dims, ab.first), b = Given(dims, ab.second);
    const std::string rel = fmt::format("{} = {} + {}", symbol, ab.first, ab.second);
    if (!a && !b)
      return InvalidArgument(fmt::format("--dim {}={}: {} (the mask covers the past and the new tokens); give "
                                         "--dim {}=N or --dim {}=N with it", symbol, *total, rel, ab.first, ab.second));
    if (a && b && *a + *b != *total)
      return InvalidArgument(fmt::format("--dim {}={}, {}={}, {}={}: {} does not hold", symbol, *total, ab.first, *a,
                                         ab.second, *b, rel));
    const std::string& free = a ? ab.second : ab.first;
    const int64_t rest = *total - (a ? *a : *b);
    if (rest < 0)
      return InvalidArgument(fmt::format("--dim {}={}: {} leaves {} at {}", symbol, *total, rel, free, rest));
    dims[free] = rest;
  }
  return dims;
}

namespace {

// Where row `b` of a mask of `length` (`past` cached) has its padding:
// [begin, end), empty for row 0 and for kEdges.
std::pair<int64_t, int64_t> Padding(int64_t b, int64_t length, int64_t past, Mode mode) {
  const int64_t pad = mode == Mode::kEdges ? 0 : std::min(b, length - 1);
  if (pad <= 0) return {0, 0};
  if (b % 3 == 1) return {0, pad};
  if (b % 3 == 2 && past > 0 && past < length) {
    const int64_t n = std::min(pad, past);
    return {past - n, past};
  }
  return {length - pad, length};
}

// The rows of `t` (all axes but the last) and the batch index of each.
int64_t Rows(const Tensor& t) { return t.size() / std::max<int64_t>(1, t.shape().back()); }
int64_t BatchOf(const Tensor& t, int64_t row) {
  return t.rank() >= 2 ? row / std::max<int64_t>(1, Rows(t) / std::max<int64_t>(1, t.shape()[0])) : 0;
}

}  // namespace

void FillRole(Tensor& t, const InputPlan& in, Mode mode, int64_t past) {
  if (mode == Mode::kZeros || t.rank() == 0 || t.size() == 0 || in.range) return;
  if (in.role != InputRole::kMask) return;
  const int64_t length = t.shape().back();
  for (int64_t row = 0; row < Rows(t); ++row) {
    const auto [begin, end] = Padding(BatchOf(t, row), length, past, mode);
    for (int64_t i = 0; i < length; ++i) Store(t, row * length + i, i >= begin && i < end ? 0 : 1);
  }
}

void FillPositions(Tensor& t, const InputPlan& in, Mode mode, int64_t past, const Tensor* mask) {
  if (mode == Mode::kZeros || t.rank() == 0 || t.size() == 0 || in.range) return;
  if (in.role != InputRole::kPositions) return;
  const int64_t seq = t.shape().back();
  const bool by_mask = mask != nullptr && mask->rank() == 2 && t.rank() == 2 && mask->shape()[0] == t.shape()[0] &&
                       mask->shape()[1] == past + seq;
  for (int64_t row = 0; row < Rows(t); ++row) {
    if (!by_mask) {
      for (int64_t i = 0; i < seq; ++i) Store(t, row * seq + i, static_cast<double>(past + i));
      continue;
    }
    const int64_t total = past + seq, b = BatchOf(t, row);
    int64_t kept = 0;
    for (int64_t j = 0; j < total; ++j) {
      const bool on = mask->GetAsDouble(b * total + j) != 0;
      kept += on ? 1 : 0;
      if (j >= past) Store(t, row * seq + (j - past), on ? static_cast<double>(kept - 1) : 1);
    }
  }
}

}  // namespace sample_internal
}  // namespace parity
