#include "engine/dataset/dataset_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parity {

double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  if (frac == 0 || sorted[lo] == sorted[hi]) return sorted[lo];
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

namespace {

// NaN sorts last, as NumPy's sort puts it.
DatasetQuantiles QuantilesOf(std::vector<double> v) {
  DatasetQuantiles q;
  if (v.empty()) return q;
  std::sort(v.begin(), v.end(), [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; });
  q.min = v.front();
  q.p1 = Quantile(v, 0.01);
  q.p10 = Quantile(v, 0.10);
  q.p50 = Quantile(v, 0.50);
  q.p90 = Quantile(v, 0.90);
  q.p99 = Quantile(v, 0.99);
  q.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;  // in sorted order: the same sum whichever engine produced the rows
  q.mean = sum / static_cast<double>(v.size());
  return q;
}

int HistogramBin(double max_abs) {
  if (max_abs == 0) return 0;
  if (!std::isfinite(max_abs)) return kDatasetHistogramBins - 1;
  const int decade = static_cast<int>(std::floor(std::log10(max_abs)));
  return std::clamp(decade - kDatasetHistogramFirstDecade + 1, 1, kDatasetHistogramBins - 1);
}

DatasetOutputSummary SummarizeOutput(const DatasetReport& report, size_t k) {
  DatasetOutputSummary s{.name = report.outputs[k], .histogram = std::vector<int64_t>(kDatasetHistogramBins, 0)};
  std::vector<double> max_abs, cosine, snr, share, score;
  for (const DatasetRow& row : report.rows) {
    const DatasetCell& c = row.cells[k];
    max_abs.push_back(c.max_abs);
    cosine.push_back(c.cosine);
    snr.push_back(c.snr_db);
    share.push_back(c.mismatch_share);
    score.push_back(c.score);
    s.failed += !c.passed;
    ++s.histogram[HistogramBin(c.max_abs)];
    if (c.top1_rows == 0) continue;
    s.classifier = true;
    s.top1_rows += c.top1_rows;
    s.top1_agree += c.top1_agree;
    if (c.flipped()) s.flipped.push_back(row.id);
  }
  s.max_abs = QuantilesOf(std::move(max_abs));
  s.cosine = QuantilesOf(std::move(cosine));
  s.snr_db = QuantilesOf(std::move(snr));
  s.mismatch_share = QuantilesOf(std::move(share));
  s.score = QuantilesOf(std::move(score));
  return s;
}

// The output of a row's highest score (the first on ties).
size_t WorstCell(const DatasetRow& row) {
  size_t best = 0;
  for (size_t k = 1; k < row.cells.size(); ++k)
    if (row.cells[k].score > row.cells[best].score) best = k;
  return best;
}

// Row indices by falling score, ties in stream order.
std::vector<size_t> ByScore(const DatasetReport& report) {
  std::vector<size_t> order(report.rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto score = [&](size_t i) {
    const DatasetRow& r = report.rows[i];
    return r.cells.empty() ? 0.0 : r.cells[WorstCell(r)].score;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score(a) > score(b); });
  return order;
}

bool AnyFlip(const DatasetRow& row) {
  return std::any_of(row.cells.begin(), row.cells.end(), [](const DatasetCell& c) { return c.flipped(); });
}

}  // namespace

void SummarizeDataset(DatasetReport& report) {
  report.summaries.clear();
  for (size_t k = 0; k < report.outputs.size(); ++k) report.summaries.push_back(SummarizeOutput(report, k));
  report.worst.clear();
  for (size_t i : ByScore(report)) {
    if (report.worst.size() >= kDatasetWorstListed) break;
    const DatasetRow& r = report.rows[i];
    if (r.cells.empty()) continue;
    const DatasetCell& c = r.cells[WorstCell(r)];
    report.worst.push_back({.id = r.id, .output = report.outputs[WorstCell(r)], .score = c.score,
                            .max_abs = c.max_abs, .cosine = c.cosine, .snr_db = c.snr_db});
  }
  report.flips_total = std::count_if(report.rows.begin(), report.rows.end(), AnyFlip);
  report.overall = Verdict::kPass;
  for (const auto& s : report.summaries)
    if (s.failed > 0) report.overall = Verdict::kFail;
  // Nothing judged (no sample, or none whose outputs were compared): NOT
  // JUDGED, never PASS (issue 50).
  if (report.overall == Verdict::kPass &&
      std::none_of(report.rows.begin(), report.rows.end(), [](const DatasetRow& r) { return !r.cells.empty(); }))
    report.overall = Verdict::kUnchecked;
}

std::vector<DatasetPick> PickSamplesToLocate(const DatasetReport& report, size_t worst, size_t flip_cap) {
  std::vector<DatasetPick> picks;
  const std::vector<size_t> order = ByScore(report);
  for (size_t n = 0; n < worst && n < order.size(); ++n) {
    const DatasetRow& r = report.rows[order[n]];
    if (r.cells.empty() || r.cells[WorstCell(r)].score == 0) break;  // identical samples say nothing
    picks.push_back({.row = order[n], .worst = true, .flipped = AnyFlip(r)});
  }
  // The cap counts every flipped sample located, the worst ones among them.
  size_t flips = std::count_if(picks.begin(), picks.end(), [](const DatasetPick& p) { return p.flipped; });
  for (size_t i = 0; i < report.rows.size() && flips < flip_cap; ++i) {
    if (!AnyFlip(report.rows[i])) continue;
    auto it = std::find_if(picks.begin(), picks.end(), [&](const DatasetPick& p) { return p.row == i; });
    if (it != picks.end()) continue;
    picks.push_back({.row = i, .worst = false, .flipped = true});
    ++flips;
  }
  return picks;
}

}  // namespace parity
