// The HTML page of `check --dataset`: verdict, per output the histogram of
// per-sample error (CSS bars, no script), quantiles and top-1 agreement, the
// worst samples, the ranking of first divergences, bad samples and notes.
// Self-contained; a Content-Security-Policy forbids every fetch.
#include <algorithm>

#include <fmt/format.h>

#include "report/dataset_report.h"
#include "report/html/html_internal.h"

namespace parity {
namespace {

using html::Esc;
using html::Num;

std::string BinLabel(size_t bin) {
  if (bin == 0) return "0";
  if (bin + 1 == kDatasetHistogramBins) return fmt::format("&ge;1e{}", kDatasetHistogramFirstDecade + int(bin) - 1);
  return fmt::format("1e{}", kDatasetHistogramFirstDecade + int(bin) - 1);
}

std::string Histogram(const DatasetOutputSummary& s) {
  const int64_t top = std::max<int64_t>(1, *std::max_element(s.histogram.begin(), s.histogram.end()));
  std::string bars;
  for (size_t b = 0; b < s.histogram.size(); ++b)
    bars += fmt::format(
        "<div class=\"bar\" title=\"{} samples\"><span style=\"height:{}%\"></span><small>{}</small><i>{}</i></div>",
        s.histogram[b], s.histogram[b] * 100 / top, BinLabel(b), s.histogram[b]);
  return "<div class=\"hist\" data-chart=\"histogram\">" + bars + "</div>";
}

std::string QuantileRow(const char* name, const DatasetQuantiles& q) {
  return fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", name,
                     Num(q.min), Num(q.p1), Num(q.p50), Num(q.p90), Num(q.p99), Num(q.max));
}

std::string OutputSection(const DatasetOutputSummary& s, int64_t count) {
  std::string h = fmt::format("<section><h2>output {}</h2><p>{} of {} samples out of tolerance", Esc(s.name),
                              s.failed, count);
  if (s.classifier)
    h += fmt::format("; top-1 agreement <b>{:.2f}%</b> ({} of {} rows agree, {} samples flipped)",
                     100 * s.top1_agreement(), s.top1_agree, s.top1_rows, s.flipped.size());
  h += "</p><h3>per-sample max_abs (log10 bins)</h3>" + Histogram(s);
  h += "<table><tr><th></th><th>min</th><th>p1</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>" +
       QuantileRow("max_abs", s.max_abs) + QuantileRow("cosine", s.cosine) + QuantileRow("SQNR dB", s.snr_db) +
       QuantileRow("mismatch share", s.mismatch_share) + QuantileRow("score", s.score) + "</table></section>";
  return h;
}

std::string RankingSection(const DatasetReport& r) {
  std::string h = "<section id=\"ranking\"><h2>where located samples first diverge</h2>";
  if (const std::string line = DatasetHeadline(r); !line.empty()) h += "<p><b>" + html::Breakable(line) + "</b></p>";
  h += "<table><tr><th>fused node</th><th>op</th><th>node</th><th>samples</th><th>flips</th><th>covers</th></tr>";
  for (const auto& e : r.ranking) {
    std::string covers;
    for (size_t i = 0; i < e.covers.size() && i < 8; ++i) covers += (i ? ", " : "") + html::Breakable(e.covers[i]);
    if (e.covers.size() > 8) covers += fmt::format(", ... ({} nodes)", e.covers.size());
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                     html::Breakable(e.fused_node), html::Breakable(e.op_type), html::Breakable(e.node), e.samples,
                     e.flips, covers);
  }
  h += "</table>";
  if (!r.module_ranking.empty()) {
    h += "<h3>by PyTorch module</h3><p><b>" + html::Breakable(DatasetModuleHeadline(r)) + "</b></p>";
    h += "<table><tr><th>module</th><th>samples</th><th>flips</th></tr>";
    for (const auto& e : r.module_ranking)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", html::Breakable(e.module), e.samples, e.flips);
    h += "</table>";
  }
  return h + "</section>";
}

std::string WorstSection(const DatasetReport& r) {
  std::string h = "<section><h2>worst samples</h2><table><tr><th>id</th><th>output</th><th>score</th>"
                  "<th>max_abs</th><th>cosine</th><th>SQNR dB</th></tr>";
  for (const auto& w : r.worst)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", html::Breakable(w.id),
                     html::Breakable(w.output), Num(w.score), Num(w.max_abs), Num(w.cosine), Num(w.snr_db));
  return h + "</table></section>";
}

std::string NotesSection(const DatasetReport& r) {
  std::string h;
  for (const auto& b : r.bad) h += fmt::format("<li>bad sample {}: {}</li>", Esc(b.id), Esc(b.error));
  for (const auto& n : r.notes) h += "<li>" + Esc(n) + "</li>";
  return h.empty() ? "" : "<section><h2>notes</h2><ul>" + h + "</ul></section>";
}

constexpr const char* kStyle =
    "body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}.hist{display:flex;align-items:flex-end;"
    "height:140px;gap:3px;margin:.5em 0 1.5em}.bar{width:44px;height:100%;display:flex;flex-direction:column;"
    "justify-content:flex-end;align-items:center;position:relative}.bar span{display:block;width:100%;"
    "background:#4a7bd0}.bar small{font-size:10px}.bar i{font-size:10px;color:#666}.PASS{color:#1a7f37}"
    ".FAIL{color:#c62828}"
    // Nothing wider than the window (issue 54): names wrap at their separators
    // (<wbr>, html::Breakable), commands inside their box, a wide table scrolls in its own.
    "td,th,p,li{overflow-wrap:break-word}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f7f9;"
    "padding:6px 8px}table{display:block;max-width:100%;overflow-x:auto}";

}  // namespace

std::string DatasetReportToHtml(const DatasetReport& r, const ModelExplorerLinks* model_explorer) {
  std::string body = fmt::format(
      "<h1 class=\"{0}\">{0} &middot; {1} samples</h1><p>{2} against {3}, target [{4}], {5} engine; {6} bad samples "
      "skipped; {7} samples with a top-1 flip</p>",
      OverallVerdictName(r.overall), r.count, Esc(r.model), Esc(r.reference), Esc(r.target.Label()), Esc(r.engine),
      r.skipped, r.flips_total);
  for (const auto& s : r.summaries) body += OutputSection(s, r.count);
  body += WorstSection(r) + RankingSection(r) + NotesSection(r);
  if (model_explorer) body += html::ModelExplorerLinksSection(*model_explorer);
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" "
      "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>{} &middot; parity check --dataset &middot; "
      "{}</title><style>{}</style></head><body>{}</body></html>\n",
      OverallVerdictName(r.overall), Esc(r.model), kStyle, body);
}

}  // namespace parity
