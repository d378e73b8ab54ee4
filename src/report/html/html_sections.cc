// The head of report.html: navigation, verdict, failed tests, the
// per-sample metrics, and the chart sections (containers only; the page's
// script draws into them).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/control_flow_writer.h"
#include "report/ep_report.h"
#include "report/console/console_table.h"
#include "report/check_summary.h"
#include "report/html/html_internal.h"

namespace parity::html {

namespace {

std::string ModelPath(const CheckReport& r) {
  return r.model ? r.model->path : "";
}

// Which band judged which part of an output judged slice by slice
// (compare/slice_bands.h); "" for one band per output.
std::string SliceBandsCell(const ResolvedTolerance& t) {
  if (!t.slices) return "";
  std::string s = fmt::format("<br><b>per slice along axis {}</b>", t.slices->axis);
  for (const SlicePart& p : t.slices->parts)
    s += fmt::format("<br>slices {} (rms {}&ndash;{}): atol {}&ndash;{}, {}", Esc(p.slices), Num(p.rms_min),
                     Num(p.rms_max), Num(p.atol_min), Num(p.atol_max),
                     p.failed == 0 ? "pass" : fmt::format("<b>{} of {} fail</b>", p.failed, p.count));
  return s;
}

}  // namespace

std::string NavSection(const CheckReport& r) {
  std::string s =
      "<nav class=\"toc\"><a href=\"#verdict\">Verdict</a><a href=\"#failed\">Failed tests</a>"
      "<a href=\"#samples\">Outputs</a>";
  if (r.alignment) s += "<a href=\"#alignment\">PyTorch</a>";
  if (r.generation) s += "<a href=\"#generation\">Generation</a>";
  if (!r.layer_curve.empty()) s += "<a href=\"#layers\">Layer error</a>";
  if (r.locate) s += "<a href=\"#locate\">Locate</a>";
  s += "<a href=\"#histograms\">Histograms</a>";
  if (!r.performance.empty()) s += "<a href=\"#performance\">Latency</a>";
  s += "<a href=\"#stages\">Stages</a>";
  s += "<a href=\"#environment\">Environment</a></nav>\n";
  return s;
}

std::string VerdictSection(const CheckReport& r) {
  const bool fail = r.overall == Verdict::kFail;
  const std::string word(r.OverallWord());
  const char* css = fail ? "fail" : r.overall == Verdict::kPass ? "pass" : "unjudged";
  int stages_passed = 0;
  for (const auto& st : r.stages) stages_passed += st.status == Verdict::kPass;
  int samples_failed = 0;
  for (const auto& sm : r.samples) samples_failed += sm.status == Verdict::kFail;
  const size_t failed_tests = r.FailedTests().size();

  std::string s =
      fmt::format("<section id=\"verdict\" class=\"verdict {}\" data-verdict=\"{}\">\n", css, word);
  s += fmt::format("<div class=\"badge\">{}</div>\n<div class=\"what\">\n", word);
  for (const auto& why : r.coverage.missing)
    s += fmt::format("<div class=\"note not-judged\"><b>not judged:</b> {}</div>\n", Esc(why));
  s += fmt::format("<h1>parity check</h1><div class=\"model mono\">{}</div>\n", Esc(ModelPath(r)));
  s += fmt::format("<div class=\"against\" data-against=\"{}\">{}</div>\n", Esc(JudgedAgainstKind(r)),
                   Esc(JudgedAgainst(r)));
  for (const auto& n : r.notes) s += fmt::format("<div class=\"note report-note\"><b>note:</b> {}</div>\n", Esc(n));
  s += ControlFlowHtml(r.control_flow);
  s += fmt::format(
      "<div class=\"counts\">{} failed test{} &middot; {} of {} stages passed &middot; {} of {} samples "
      "failed</div>\n",
      failed_tests, failed_tests == 1 ? "" : "s", stages_passed, r.stages.size(), samples_failed,
      r.samples.size());
  s += "<div class=\"stages\">";
  for (const auto& st : r.stages)
    s += fmt::format("<span class=\"stage-chip\">{} {}</span>", Esc(st.name), Pill(CheckVerdictName(st.status)));
  s += "</div>\n";
  if (r.arithmetic)
    s += fmt::format("<div class=\"why\" id=\"arithmetic\"><b>Why:</b> {}</div>\n", Esc(ArithmeticLine(*r.arithmetic)));
  for (const std::string& line : AssignmentLines(r.target_assignment))
    s += fmt::format("<div class=\"ep mono\">target EP: {}</div>\n", Esc(line));
  s += "</div>\n</section>\n";
  return s;
}

std::string FailedTestsSection(const CheckReport& r) {
  std::string s = "<section id=\"failed\">\n<h2>Failed tests</h2>\n";
  bool any = false;
  std::string rows;
  for (const auto& [st, f] : FailedTestsCulpritFirst(r)) {  // the culprit first (issue 54)
    any = true;
    rows += fmt::format("<tr><td class=\"id mono\">{}</td><td>{}</td><td class=\"reason\">{}</td></tr>\n",
                        Breakable(f->id), Esc(st->name), Breakable(f->message));
  }
  if (!any) {
    s += "<p class=\"empty\">No failed tests.</p>\n";
  } else {
    s += "<table "
         "class=\"failed-list\"><thead><tr><th>test</th><th>stage</th><th>reason</th></tr></thead><tbody>\n";
    s += rows + "</tbody></table>\n";
  }
  // Refusals that are not failures (a generated size outside the model's
  // domain, an anomaly raising under both configs): listed apart, never red.
  const auto refused = r.ExpectedRefusals();
  if (!refused.empty()) {
    s += fmt::format("<h3>Expected refusals ({}, not failures)</h3>\n<div class=\"table-wrap\"><table class=\"refusals\"><thead><tr>"
                     "<th>sample</th><th>status</th><th>what ONNX Runtime said</th></tr></thead><tbody>\n",
                     refused.size());
    for (const SampleResult* sm : refused)
      s += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td class=\"reason\">{}</td></tr>\n", Esc(sm->name),
                       Pill(CheckVerdictName(sm->status)), Esc(sm->error));
    s += "</tbody></table></div>\n";
  }
  return s + "</section>\n";
}

std::string SamplesSection(const CheckReport& r) {
  std::string s = "<section id=\"samples\">\n<h2>Outputs per sample</h2>\n";
  s += "<p class=\"note\">Each output of each sample against its reference; error statistics over the "
       "elements "
       "finite on both sides, NaN/Inf counted apart. Failing rows are tinted.</p>\n";
  if (r.samples.empty()) return s + "<p class=\"empty\">No samples were run.</p>\n</section>\n";
  s += "<div class=\"table-wrap\"><table class=\"samples\"><thead><tr><th>sample</th><th>output <span "
       "class=\"note\">vs reference</span></th>"
       "<th>status</th><th class=\"num\">max_abs</th><th>worst element (ref &rarr; test)</th>"
       "<th class=\"num\">max_rel</th><th class=\"num\">cosine</th><th class=\"num\">snr dB</th>"
       "<th class=\"num\">mismatches</th><th class=\"num\">NaN mism.</th><th>tolerance</th><th>reason</th>"
       "</tr></thead><tbody>\n";
  size_t rows = 0;
  // Failing samples first (a person reads the top of the table), each group in run order.
  std::vector<const SampleResult*> order;
  for (const auto& sm : r.samples) order.push_back(&sm);
  std::stable_partition(order.begin(), order.end(), [](const SampleResult* sm) { return sm->status == Verdict::kFail; });
  for (const SampleResult* sp : order) {
    const SampleResult& sm = *sp;
    const bool behaviour_row = !sm.behaviour.empty() && sm.error.empty() && !sm.outputs.empty();
    const size_t span = sm.outputs.empty() || !sm.error.empty() ? 1 : sm.outputs.size() + behaviour_row;
    // The sample's cell spans all its rows; only the first row carries it.
    std::string sample_cell = fmt::format(
        "<td class=\"sample\" rowspan=\"{}\"><b>{}</b><br><span class=\"note\">{}</span></td>", span,
        Esc(sm.name), Esc(sm.kind + (sm.input_summary.empty() ? "" : " \xC2\xB7 " + sm.input_summary)));
    if (!sm.error.empty() || sm.outputs.empty()) {
      s += fmt::format(
          "<tr class=\"{}\">{}<td></td><td>{}</td><td colspan=\"9\" class=\"reason\">{}</td></tr>\n",
          sm.error.empty() || sm.status != Verdict::kFail ? "" : "raised", sample_cell, Pill(CheckVerdictName(sm.status)),
          Esc(sm.error.empty() ? (sm.behaviour.empty() ? "no outputs compared" : sm.behaviour)
                               : "ONNX Runtime raised: " + sm.error));
      continue;
    }
    for (const auto& o : sm.outputs) {
      if (++rows > kMaxTableRows) break;
      const TensorComparison& c = o.comparison;
      const TensorMetrics& m = c.metrics;
      const auto& t = c.tolerance.tolerance;
      s += fmt::format(
          "<tr class=\"{}\">{}<td class=\"name\"><span class=\"mono\">{}</span><br><span class=\"note\">vs "
          "{}</span></td><td>{}</td>",
          c.status == Verdict::kFail ? "fail" : "", sample_cell, Esc(o.output), Esc(o.against),
          Pill(VerdictName(c.status)));
      sample_cell.clear();
      if (c.status == Verdict::kUnchecked) {
        s += "<td colspan=\"7\"></td>";
      } else {
        std::string where;
        for (size_t i = 0; i < m.max_abs_index.size(); ++i)
          where += fmt::format("{}{}", i ? "," : "", m.max_abs_index[i]);
        s += fmt::format(
            "<td class=\"num\">{}</td><td class=\"mono\">[{}] {} &rarr; {}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} / {}</td><td "
            "class=\"num\">{}</td>",
            Num(m.max_abs), where, Num(m.ref_at_max), Num(m.test_at_max), Num(m.max_rel), Esc(CosineText(m)),
            Num(m.snr_db), m.mismatches, m.count, m.nan_mismatch);
      }
      // The tolerance, its mode, and why (hover for the rule that decided it);
      // a tolerance warning goes with the reason.
      std::string reason = Esc(c.reason);
      for (const auto& w : c.tolerance.warnings) reason += fmt::format("<br><b>warning:</b> {}", Esc(w));
      s += fmt::format(
          "<td class=\"mono\" title=\"{}\">atol {} rtol {}<br>{} &middot; {}{}</td><td class=\"reason\">{}</td></tr>\n",
          Esc(c.tolerance.Why()), Num(t.atol), Num(t.rtol), Esc(ToleranceModeName(c.tolerance.mode)),
          Esc(StatisticName(t.decide_by)), SliceBandsCell(c.tolerance), reason);
    }
    if (behaviour_row && rows <= kMaxTableRows)
      s += fmt::format("<tr><td colspan=\"11\" class=\"note\">behaviour: {}</td></tr>\n", Esc(sm.behaviour));
  }
  s += "</tbody></table></div>\n";
  if (rows > kMaxTableRows)
    s += fmt::format("<p class=\"note\">First {} outputs shown; report.json has all.</p>\n", kMaxTableRows);
  return s + "</section>\n";
}

std::string LayerCurveSection(const CheckReport& r) {
  if (r.layer_curve.empty()) return "";
  std::string s = "<section id=\"layers\">\n<h2>Error along the graph</h2>\n";
  s += "<p class=\"note\">Each observed tensor in topological order: its largest error divided by the "
       "tolerance band at that element (log scale). Above the red line at 1 the tensor fails. Exact matches are "
       "drawn at the floor of the axis; tensors a fusion removed (unchecked: nothing to compare) are not on the "
       "line but marked in grey along the top.</p>\n";
  const LayerErrorPoint* first = nullptr;
  for (const auto& p : r.layer_curve)
    if (p.status == Verdict::kFail) {
      first = &p;
      break;
    }
  if (first)
    s += fmt::format(
        "<p>First tensor over tolerance: <b class=\"mono\">{}</b> ({}, index {}), error {} &times; "
        "tolerance, max_abs {}.</p>\n",
        Esc(first->tensor), Esc(first->op_type), first->index, Num(first->error_ratio), Num(first->max_abs));
  s += "<div class=\"chart\" id=\"chart-layers\" data-chart=\"layer_curve\"></div>\n</section>\n";
  return s;
}

// The rule each output's verdict band came from (engine/quant/output_tolerance.h).
std::string OutputRulesTable(const QuantReport& q) {
  if (q.outputs.empty()) return "";
  std::string s = "<table class=\"rules\">\n<tr><th>output</th><th>rule</th><th>band</th></tr>\n";
  for (const auto& o : q.outputs)
    s += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>\n", Esc(o.output), Esc(o.rule),
                     Esc(o.why));
  return s + "</table>\n";
}

std::string QuantSection(const CheckReport& r) {
  if (!r.quant) return "";
  const QuantReport& q = *r.quant;
  if (q.layers.empty()) {
    if (q.outputs.empty()) return "";
    return "<section id=\"quant\">\n<h2>Verdict bands of a derived model</h2>\n" + OutputRulesTable(q) +
           "</section>\n";
  }
  std::string s = "<section id=\"quant\">\n<h2>Precision along the graph (SQNR)</h2>\n";
  s += OutputRulesTable(q);
  s += fmt::format("<p class=\"note\">Each matched layer of the {} model against the float model, in the float "
                   "model's topological order: its SQNR run end to end (cumulative) and cut out, fed the float "
                   "model's inputs (local). {} of {} conv/matmul layers matched. Rule: {}.</p>\n",
                   Esc(q.kind), q.compute_matched, q.compute_layers, Esc(q.rule));
  if (q.clipped) s += fmt::format("<p class=\"clipping\"><b>Clipping:</b> {}.</p>\n", Esc(q.clipped->Describe()));
  if (q.worst_local) {
    const QuantLayer& w = q.layers[*q.worst_local];
    // As the console: a reader of the clipped tensor is not the one to keep in float.
    const bool reads_clipped = q.clipped && std::find(q.clipped->readers.begin(), q.clipped->readers.end(),
                                                      w.node) != q.clipped->readers.end();
    s += fmt::format("<p>Worst local loss: <b class=\"mono\">{}</b> ({}), local SQNR {} dB: {}.</p>\n", Esc(w.node),
                     Esc(w.op_type), Num(w.local.sqnr_db),
                     reads_clipped ? fmt::format("it reads the clipped output of <b class=\"mono\">{}</b> (above): "
                                                 "keep that one out of int8, not this one",
                                                 Esc(q.clipped->node))
                                   : std::string("the layer to keep in float"));
  }
  if (q.overflow)
    s += fmt::format("<p>float16 overflow first at <b class=\"mono\">{}</b>: {}.</p>\n", Esc(q.overflow->node),
                     Esc(q.overflow->reason));
  s += "<div class=\"chart\" id=\"chart-quant\" data-chart=\"quant_sqnr\"></div>\n</section>\n";
  return s;
}

std::string HistogramsSection(const CheckReport& r) {
  std::string s = "<section id=\"histograms\">\n<h2>Error histograms</h2>\n";
  s += "<p class=\"note\">|test &minus; reference| over the finite elements of each output, by decade: one "
       "chart per output, from its worst sample (failing outputs first).</p>\n";
  const auto picks = HistogramOutputs(r, kMaxHistograms);
  if (picks.empty()) return s + "<p class=\"empty\">No output was compared.</p>\n</section>\n";
  s += "<div class=\"chart-grid\">\n";
  for (size_t i = 0; i < picks.size(); ++i) {
    const SampleResult& sm = r.samples[picks[i].first];
    const OutputResult& o = sm.outputs[picks[i].second];
    s += fmt::format(
        "<div class=\"chart\" id=\"chart-hist-{}\" data-chart=\"histogram\" data-index=\"{}\">"
        "<div class=\"chart-title\"><span class=\"mono\">{}</span> / <span "
        "class=\"mono\">{}</span>{}</div></div>\n",
        i, i, Esc(o.output), Esc(sm.name), Pill(VerdictName(o.comparison.status)));
  }
  return s + "</div>\n</section>\n";
}

std::string PerformanceSection(const CheckReport& r) {
  if (r.performance.empty()) return "";
  std::string s = "<section id=\"performance\">\n<h2>Latency and memory</h2>\n";
  s += "<table><thead><tr><th>config</th><th class=\"num\">runs</th><th class=\"num\">mean ms</th>"
       "<th class=\"num\">p50</th><th class=\"num\">p95</th><th class=\"num\">p99</th><th "
       "class=\"num\">min</th>"
       "<th class=\"num\">max</th><th class=\"num\">session ms</th><th class=\"num\">peak RSS</th>"
       "<th>deterministic</th></tr></thead><tbody>\n";
  for (const auto& p : r.performance) {
    const LatencyStats& l = p.latency;
    s += fmt::format(
        "<tr><td class=\"mono\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        Esc(p.config),
        l.reused_runs > 0 ? fmt::format("{} ({} the check's own)", l.runs, l.reused_runs) : std::to_string(l.runs),
        Num(l.mean_ms), Num(l.p50_ms), Num(l.p95_ms), Num(l.p99_ms), Num(l.min_ms),
        Num(l.max_ms), Num(p.session_creation_ms),
        (p.peak_rss_bytes > 0 ? fmt::format("{:.1f} MiB", static_cast<double>(p.peak_rss_bytes) / 1048576.0)
                              : std::string("n/a")) +
            (p.gpu_peak_bytes
                 ? fmt::format("; GPU {:.1f} MiB", static_cast<double>(*p.gpu_peak_bytes) / 1048576.0)
                 : std::string()),
        p.deterministic ? Pill("pass") : Pill("fail"));
  }
  s += "</tbody></table>\n";
  s += "<div class=\"chart-grid\">\n"
       "<div class=\"chart\" id=\"chart-latency-quantiles\" data-chart=\"latency_quantiles\">"
       "<div class=\"chart-title\">Latency by percentile (ms)</div></div>\n"
       "<div class=\"chart\" id=\"chart-latency-runs\" data-chart=\"latency_runs\">"
       "<div class=\"chart-title\">Latency of each timed run (ms)</div></div>\n</div>\n";
  return s + "</section>\n";
}

}  // namespace parity::html
