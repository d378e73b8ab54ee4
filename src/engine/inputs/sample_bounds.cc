// Bounds on generated samples (issue 56, class 5; sample_gen.h, "Shapes"):
// the defaulted dynamic dims halved, largest first, until each input holds at
// most max_input_elements and a sample at most max_sample_bytes.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "engine/inputs/sample_plan.h"

namespace parity::sample_internal {

namespace {

// The elements of `in` at `sizes`, saturating at int64's max.
int64_t Elements(const InputPlan& in, const std::map<std::string, int64_t>& sizes) {
  int64_t n = 1;
  for (const auto& a : in.axes) {
    const int64_t d = a.symbol.empty() ? a.fixed : sizes.at(a.symbol);
    if (d <= 0) return 0;
    n = n > std::numeric_limits<int64_t>::max() / d ? std::numeric_limits<int64_t>::max() : n * d;
  }
  return n;
}

int64_t SampleBytes(const Plan& plan, const std::map<std::string, int64_t>& sizes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (const auto& in : plan.inputs) {
    const int64_t size = static_cast<int64_t>(DTypeSize(in.dtype));
    const int64_t n = Elements(in, sizes);
    const int64_t bytes = n > kMax / std::max<int64_t>(size, 1) ? kMax : n * size;
    total = total > kMax - bytes ? kMax : total + bytes;
  }
  return total;
}

// Halves the largest `shrinkable` dim of each input over the element bound
// (of every input while the sample is over the byte bound), each dim once a
// round, until the sample is within both or nothing is left to halve.
// Returns the sample's bytes.
int64_t FitToBounds(const Plan& plan, const SampleGenOptions& o, const std::set<std::string>& shrinkable,
                    std::map<std::string, int64_t>& sizes) {
  while (true) {
    const bool over_bytes = SampleBytes(plan, sizes) > o.max_sample_bytes;
    std::set<std::string> halve;
    for (const auto& in : plan.inputs) {
      if (!over_bytes && Elements(in, sizes) <= o.max_input_elements) continue;
      const std::string* largest = nullptr;
      for (const auto& a : in.axes)
        if (!a.symbol.empty() && shrinkable.contains(a.symbol) && sizes.at(a.symbol) > 1 &&
            (largest == nullptr || sizes.at(a.symbol) > sizes.at(*largest)))
          largest = &a.symbol;
      if (largest != nullptr) halve.insert(*largest);
    }
    if (halve.empty()) return SampleBytes(plan, sizes);
    for (const auto& s : halve) sizes[s] = (sizes[s] + 1) / 2;
    ApplyRelations(plan.relations, sizes);
  }
}

}  // namespace

// The plan's defaults within the bounds; the dims made smaller in `notes`.
void BoundDefaults(Plan& plan, const SampleGenOptions& o, SampleNotes* notes) {
  std::set<std::string> shrinkable;
  for (const auto& s : plan.symbols)
    if (!Pinned(plan, s)) shrinkable.insert(s);
  const std::map<std::string, int64_t> before = plan.defaults;
  FitToBounds(plan, o, shrinkable, plan.defaults);
  std::string made;
  for (const auto& s : plan.symbols)
    if (plan.defaults.at(s) != before.at(s))
      made += fmt::format("{}{} {} (default {})", made.empty() ? "" : ", ", s, plan.defaults.at(s), before.at(s));
  if (notes != nullptr && !made.empty())
    notes->bounded = fmt::format(
        "{}; to keep each generated input within {} elements and a sample within {} MiB (--max-input-elements, "
        "--max-generated-mib)",
        made, o.max_input_elements, o.max_sample_bytes >> 20);
}

// A recipe's sizes within the bounds, the dims it sets itself kept; an error
// when the model's fixed dims alone hold more than the byte bound.
Status BoundRecipe(const Plan& plan, const SampleGenOptions& o, const std::string& name,
                   std::map<std::string, int64_t>& sizes) {
  std::set<std::string> shrinkable;
  for (const auto& s : plan.symbols)
    if (!Pinned(plan, s) && sizes.at(s) == plan.defaults.at(s)) shrinkable.insert(s);
  const int64_t bytes = FitToBounds(plan, o, shrinkable, sizes);
  if (bytes > o.max_sample_bytes)
    return InvalidArgument(fmt::format(
        "generated sample '{}' would hold {} bytes, over the bound of {} MiB (--max-generated-mib): the model's "
        "fixed dims or the dims given hold that much; raise the bound or give --inputs",
        name, bytes, o.max_sample_bytes >> 20));
  return {};
}

}  // namespace parity::sample_internal
