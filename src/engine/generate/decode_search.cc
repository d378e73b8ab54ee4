#include "engine/generate/decode_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/generate/decode_tensors.h"

namespace parity {
namespace {

// Row `i` of [rows, vocab] as float64.
std::vector<double> Row(const Tensor& last, int64_t i) {
  const int64_t vocab = last.shape().back();
  std::vector<double> out(static_cast<size_t>(vocab));
  for (int64_t v = 0; v < vocab; ++v) out[static_cast<size_t>(v)] = last.GetAsDouble(i * vocab + v);
  return out;
}

// Indexes of `x` by descending value, the lower index first on ties.
std::vector<size_t> Descending(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] > x[b]; });
  return order;
}

std::vector<double> LogSoftmax(const std::vector<double>& x) {
  const double top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - top);
  const double log_sum = top + std::log(sum);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] - log_sum;
  return out;
}

// search.py's _sample_row: softmax(logits / temperature), top_k then top_p
// kept, the first index whose cumulative kept probability exceeds u x their sum.
int64_t SampleRow(const std::vector<double>& logits, double u, const RecordedSearch& s) {
  std::vector<double> probs(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) probs[i] = logits[i] / s.temperature;
  probs = LogSoftmax(probs);
  for (double& p : probs) p = std::exp(p);
  const std::vector<size_t> order = Descending(probs);
  size_t n = s.top_k == 0 ? order.size() : std::min(order.size(), static_cast<size_t>(s.top_k));
  if (s.top_p < 1) {
    double reach = 0;
    size_t below = 0;
    for (size_t i : order) {
      reach += probs[i];
      if (reach < s.top_p) ++below;
    }
    n = std::min(n, below + 1);
  }
  std::vector<double> kept(probs.size(), 0);
  for (size_t k = 0; k < n; ++k) kept[order[k]] = probs[order[k]];
  std::vector<double> cum(kept.size());
  std::partial_sum(kept.begin(), kept.end(), cum.begin());
  const double threshold = u * cum.back();
  const auto idx = std::count_if(cum.begin(), cum.end(), [&](double c) { return c <= threshold; });
  return std::min<int64_t>(idx, static_cast<int64_t>(kept.size()) - 1);
}

}  // namespace

TokenChoice TokenChooser::Beam(const Tensor& last) {
  const int64_t rows = last.shape().front(), vocab = last.shape().back();
  std::vector<double> all;
  all.reserve(static_cast<size_t>(rows * vocab));
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> logp = LogSoftmax(Row(last, i));
    const double base = scores_.empty() ? 0 : scores_[static_cast<size_t>(i)];
    for (double v : logp) all.push_back(v + base);
  }
  const std::vector<size_t> order = Descending(all);
  TokenChoice c;
  scores_.clear();
  for (int64_t k = 0; k < r_.search.beams && k < static_cast<int64_t>(order.size()); ++k) {
    const auto flat = static_cast<int64_t>(order[static_cast<size_t>(k)]);
    c.tokens.push_back(flat % vocab);
    c.origins.push_back(flat / vocab);
    scores_.push_back(all[order[static_cast<size_t>(k)]]);
  }
  return c;
}

Result<TokenChoice> TokenChooser::Choose(int64_t step, const Tensor& last) {
  if (r_.search.kind == "beam") return Beam(last);
  if (r_.search.kind != "sample") return TokenChoice{GreedyTokens(last), {}};
  const int64_t rows = last.shape().front();
  if (step >= static_cast<int64_t>(r_.steps.size()) ||
      static_cast<int64_t>(r_.steps[static_cast<size_t>(step)].draws.size()) != rows)
    return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].draws: one draw per row due", step));
  TokenChoice c;
  for (int64_t i = 0; i < rows; ++i)
    c.tokens.push_back(SampleRow(Row(last, i), r_.steps[static_cast<size_t>(step)].draws[static_cast<size_t>(i)],
                                 r_.search));
  return c;
}

Result<Tensor> GatherRows(const Tensor& t, const std::vector<int64_t>& origins) {
  if (t.rank() < 1 || t.dtype() == DType::kString)
    return InvalidArgument(fmt::format("rows of a tensor of shape {}", ShapeToString(t.shape())));
  Shape shape = t.shape();
  const int64_t rows = shape.front();
  shape.front() = static_cast<int64_t>(origins.size());
  PARITY_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(t.dtype(), shape));
  const size_t row_bytes = rows > 0 ? t.byte_size() / static_cast<size_t>(rows) : 0;
  for (size_t k = 0; k < origins.size(); ++k) {
    if (origins[k] < 0 || origins[k] >= rows)
      return InvalidArgument(fmt::format("beam origin {} of {} rows", origins[k], rows));
    std::memcpy(out.mutable_data() + k * row_bytes, t.data() + static_cast<size_t>(origins[k]) * row_bytes,
                row_bytes);
  }
  return out;
}

}  // namespace parity
