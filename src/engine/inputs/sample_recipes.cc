// The recipes of generated samples (sample_gen.h, "Samples"): which of the
// typical, boundary and anomaly samples apply to a plan, and how each one's
// sizes and values differ from the typical sample's.
#include <fmt/format.h>

#include <algorithm>

#include "engine/inputs/sample_plan.h"

namespace parity::sample_internal {

namespace {

bool Wants(const SampleGenOptions& o, SampleKind k) {
  return std::find(o.kinds.begin(), o.kinds.end(), k) != o.kinds.end();
}

struct Applies {
  bool any_float = false, any_vocab = false, any_plain_int = false, any_count = false, any_mask = false;
};

Applies WhatApplies(const Plan& plan) {
  Applies a;
  for (const auto& in : plan.inputs) {
    a.any_float |= IsFloating(in.dtype);
    a.any_vocab |= in.vocab > 0;
    a.any_count |= in.count;
    a.any_mask |= in.role == InputRole::kMask;
    a.any_plain_int |= IsInteger(in.dtype) && in.role == InputRole::kOther && !in.count;
  }
  return a;
}

void AddSizeRecipes(const Plan& plan, const SampleGenOptions& o, std::vector<Recipe>& r) {
  const auto& d = plan.defaults;
  if (!plan.batch_like.empty()) {
    int64_t batch = 4;
    for (const auto& s : plan.batch_like) batch = std::max(batch, 2 * d.at(s));
    Recipe b{fmt::format("boundary_batch{}", batch), d};
    for (const auto& s : plan.batch_like)
      if (!Pinned(plan, s)) b.sizes[s] = batch;
    r.push_back(std::move(b));
  }
  Recipe min{"boundary_min_size", d};
  bool any_other = false;
  for (const auto& s : plan.symbols)
    if (!plan.batch_like.contains(s) && !Pinned(plan, s)) min.sizes[s] = o.min_size, any_other = true;
  if (any_other) r.push_back(std::move(min));
  if (!plan.relations.past.empty() && !plan.dims.contains(plan.relations.past)) {
    Recipe empty_cache{"boundary_past0", d};  // the first step: nothing cached yet
    empty_cache.sizes[plan.relations.past] = 0;
    r.push_back(std::move(empty_cache));
  }
  for (const auto& in : plan.inputs) {
    size_t n = in.axes.size();
    if (n < 3 || in.role == InputRole::kCache) continue;
    const std::string& h = in.axes[n - 2].symbol;
    const std::string& w = in.axes[n - 1].symbol;
    if (h.empty() || w.empty() || h == w || plan.batch_like.contains(h) || plan.batch_like.contains(w) ||
        Pinned(plan, w))
      continue;
    Recipe ns{"boundary_nonsquare", d};
    ns.sizes[w] = 2 * std::max<int64_t>(d.at(h), 1);
    ns.sizes[h] = std::max<int64_t>(d.at(h), 1);
    r.push_back(std::move(ns));
    break;
  }
}

void AddAnomalyRecipes(const Plan& plan, const Applies& a, std::vector<Recipe>& r) {
  const auto& d = plan.defaults;
  if (a.any_float) {
    r.push_back({"anomaly_nan", d, Mode::kNaN, Mode::kTypical});
    r.push_back({"anomaly_inf", d, Mode::kInf, Mode::kTypical});
  }
  if (!plan.symbols.empty()) {
    // A sequence model's empty input is the empty sequence; else the empty
    // batch (the first batch-like symbol in model order), else the first.
    Recipe e{"anomaly_empty", d};
    std::string zero = plan.relations.seq.empty() ? plan.symbols.front() : plan.relations.seq;
    if (plan.relations.seq.empty())
      for (const auto& s : plan.symbols)
        if (plan.batch_like.contains(s)) {
          zero = s;
          break;
        }
    e.sizes[zero] = 0;
    r.push_back(std::move(e));
  }
  if (a.any_vocab) {
    r.push_back({"anomaly_out_of_range_ids", d, Mode::kTypical, Mode::kOutOfRange});
    r.push_back({"anomaly_negative_ids", d, Mode::kTypical, Mode::kNegative});
  }
}

}  // namespace

std::vector<Recipe> Recipes(const Plan& plan, const SampleGenOptions& o) {
  const Applies a = WhatApplies(plan);
  const auto& d = plan.defaults;
  std::vector<Recipe> r;
  if (Wants(o, SampleKind::kTypical)) r.push_back({"typical", d});
  if (Wants(o, SampleKind::kBoundary)) {
    r.push_back({"boundary_zeros", d, Mode::kZeros, Mode::kZeros});
    if (a.any_float) {
      r.push_back({"boundary_large", d, Mode::kTypical, Mode::kTypical, 100});
      r.push_back({"boundary_small", d, Mode::kTypical, Mode::kTypical, 1e-3});
    }
    if (a.any_plain_int) r.push_back({"boundary_dtype_max", d, Mode::kTypical, Mode::kDtypeMax});
    // A count at its dtype's max asks for 2^63 iterations or elements: a
    // run that never ends or never fits. Counts get a modest max instead.
    if (a.any_count) r.push_back({"boundary_count_max", d, Mode::kTypical, Mode::kCountMax});
    // ids at 0 and vocab - 1, masks all ones (no padding)
    if (a.any_vocab || a.any_mask) r.push_back({"boundary_edges", d, Mode::kTypical, Mode::kEdges});
    AddSizeRecipes(plan, o, r);
  }
  if (Wants(o, SampleKind::kAnomaly)) AddAnomalyRecipes(plan, a, r);
  for (auto& recipe : r) ApplyRelations(plan.relations, recipe.sizes);
  return r;
}

}  // namespace parity::sample_internal
