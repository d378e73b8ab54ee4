// Assembles report.html: the template (src/report/assets/report.html) with
// its stylesheet, script, uPlot and the report's sections and chart data.
#include "report/html/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <vector>

#include "core/json_out.h"
#include "core/short_name.h"
#include "report/json/check_json.h"
#include "report/json/compare_json.h"
#include "compare/judge.h"
#include "report/html/html_internal.h"
#include "report/json/json_helpers.h"
#include "report/report_assets.h"
#include "report/text_escape.h"
#include "report/generation_report.h"

namespace parity {

namespace html {

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Breakable(std::string_view text) {
  // Long names are shortened first: cut into pieces at the break points,
  // HtmlEscape would see no whole name to shorten (docs/security.md).
  const std::string shortened = ShortenLongNames(text);
  const std::string_view s = shortened;
  // Only long tokens need break points: short names and prose stay as written.
  constexpr size_t kLongToken = 24;
  std::string out;
  size_t from = 0, token_start = 0;
  std::vector<size_t> breaks;  // after these positions, in the current token
  const auto close_token = [&](size_t end) {
    if (end - token_start > kLongToken)
      for (size_t at : breaks) {
        out += HtmlEscape(s.substr(from, at + 1 - from)) + "<wbr>";
        from = at + 1;
      }
    breaks.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      close_token(i);
      token_start = i + 1;
    } else if (std::string_view("/+,=").find(s[i]) != std::string_view::npos && i + 1 < s.size()) {
      breaks.push_back(i);
    }
  }
  close_token(s.size());
  return out + HtmlEscape(s.substr(from));
}

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", v);
}

std::string Pill(std::string_view status) {
  std::string cls(status);
  std::transform(cls.begin(), cls.end(), cls.begin(), [](unsigned char c) { return std::tolower(c); });
  return fmt::format("<span class=\"pill {}\">{}</span>", Esc(cls), Esc(status));
}

std::string JsonText(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "";
  return ToJsonText(j);
}

std::vector<std::pair<size_t, size_t>> HistogramOutputs(const CheckReport& r, size_t max) {
  // One chart per output: samples of one output give near-identical
  // histograms, so only its worst sample is drawn (a failing one, else the
  // largest max_abs), failing outputs first.
  std::vector<std::pair<size_t, size_t>> picks;
  auto worse = [&r](std::pair<size_t, size_t> a, std::pair<size_t, size_t> b) {
    const TensorComparison& x = r.samples[a.first].outputs[a.second].comparison;
    const TensorComparison& y = r.samples[b.first].outputs[b.second].comparison;
    if ((x.status == Verdict::kFail) != (y.status == Verdict::kFail)) return x.status == Verdict::kFail;
    return x.metrics.max_abs > y.metrics.max_abs;
  };
  for (size_t s = 0; s < r.samples.size(); ++s)
    for (size_t o = 0; o < r.samples[s].outputs.size(); ++o) {
      const OutputResult& out = r.samples[s].outputs[o];
      if (out.comparison.status == Verdict::kUnchecked) continue;
      auto same = std::find_if(picks.begin(), picks.end(), [&](auto p) {
        const OutputResult& q = r.samples[p.first].outputs[p.second];
        return q.output == out.output && q.against == out.against;
      });
      if (same == picks.end())
        picks.push_back({s, o});
      else if (worse({s, o}, *same))
        *same = {s, o};
    }
  std::stable_sort(picks.begin(), picks.end(), [&r](auto a, auto b) {
    return r.samples[a.first].outputs[a.second].comparison.status == Verdict::kFail &&
           r.samples[b.first].outputs[b.second].comparison.status != Verdict::kFail;
  });
  if (picks.size() > max) picks.resize(max);
  return picks;
}

}  // namespace html

namespace {

using nlohmann::json;

std::string_view Asset(const unsigned char* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// What the page's script draws: plain arrays, non-finite numbers as strings.
json ChartData(const CheckReport& r) {
  json curve = json::array();
  for (const auto& p : r.layer_curve) curve.push_back(LayerErrorPointToJson(p));
  // The PyTorch layers in the dump's execution order, each with the judge's
  // score (LayerVerdict::score, compare/judge.h), as the layer curve is.
  json torch_curve = json::array();
  if (r.alignment)
    for (size_t k = 0; k < r.alignment->layers.size(); ++k) {
      const LayerVerdict& v = r.alignment->layers[k];
      const bool judged = v.status != Verdict::kUnchecked && v.metrics.count > 0;
      torch_curve.push_back({{"index", k},
                             {"tensor", v.alignment.module},
                             {"op_type", v.alignment.type},
                             {"status", VerdictName(v.status)},
                             // a shape mismatch has no score: drawn at the top
                             {"error_ratio", JsonNumber(judged ? v.score : v.status == Verdict::kFail ? HUGE_VAL : 0.0)}});
    }
  json histograms = json::array();
  for (auto [s, o] : html::HistogramOutputs(r, html::kMaxHistograms)) {
    const OutputResult& out = r.samples[s].outputs[o];
    const TensorMetrics& m = out.comparison.metrics;
    histograms.push_back({{"sample", r.samples[s].name},
                          {"output", out.output},
                          {"status", VerdictName(out.comparison.status)},
                          {"atol", JsonNumber(out.comparison.tolerance.tolerance.atol)},
                          {"counts", m.histogram}});
  }
  json latency = json::array();
  for (const auto& p : r.performance) {
    json samples = json::array();
    for (double v : p.latency.samples_ms)
      if (std::isfinite(v)) samples.push_back(v);
    latency.push_back({{"config", p.config}, {"samples_ms", samples}});
  }
  json edges = json::array();
  for (double e : kHistogramEdges) edges.push_back(e);
  json sqnr = json::array();
  if (r.quant)
    for (const auto& l : r.quant->layers)
      sqnr.push_back({{"node", l.node},
                      {"op_type", l.op_type},
                      {"sqnr_db", l.cumulative.measured ? JsonNumber(l.cumulative.sqnr_db) : json(nullptr)},
                      {"local_sqnr_db", l.local.measured ? JsonNumber(l.local.sqnr_db) : json(nullptr)}});
  return {{"layer_curve", curve}, {"torch_curve", torch_curve}, {"histograms", histograms},
          {"latency", latency},   {"histogram_edges", edges},   {"quant_sqnr", sqnr}};
}

// Script text may not contain "</script" (it would end the element early).
std::string ScriptSafe(std::string_view js) {
  std::string out(js);
  for (size_t at = 0; (at = out.find("</", at)) != std::string::npos; at += 3) {
    if (out.compare(at + 2, 6, "script") == 0 || out.compare(at + 2, 6, "SCRIPT") == 0)
      out.replace(at, 2, "<\\/");
  }
  return out;
}

}  // namespace

std::string CheckReportToHtml(const CheckReport& r) {
  using namespace html;
  const std::string model = r.model ? r.model->path : std::string("model");
  const std::string verdict(r.OverallWord());

  std::string body = NavSection(r);
  body += "<main>\n";
  body += VerdictSection(r);
  body += FailedTestsSection(r);
  body += SamplesSection(r);
  body += AlignmentSection(r);  // against PyTorch: right after the outputs
  if (r.generation) body += GenerationHtmlSection(*r.generation);
  body += GenerationPromptsHtml(r.generation_prompts);
  body += LayerCurveSection(r);
  body += QuantSection(r);
  body += LocateSection(r);
  body += ModelExplorerSection(r);
  body += HistogramsSection(r);
  body += PerformanceSection(r);
  body += StagesSection(r);
  body += EnvironmentSection(r);
  body += fmt::format("<footer>Written by parity {}. Charts: uPlot (MIT), embedded.</footer>\n</main>",
                      Esc(r.tool_version));

  return ReportPage(verdict + " \xC2\xB7 parity check \xC2\xB7 " + model, body, ChartData(r));
}

namespace html {

std::string ReportPage(std::string_view title, const std::string& body, const nlohmann::json& data) {
  const std::pair<std::string_view, std::string> values[] = {
      {"TITLE", Esc(title)},
      {"UPLOT_CSS", std::string(Asset(report_assets::kUplotCss, report_assets::kUplotCssSize))},
      {"REPORT_CSS", std::string(Asset(report_assets::kReportCss, report_assets::kReportCssSize))},
      {"BODY", body},
      {"DATA", JsonForScript(data)},
      {"UPLOT_JS", ScriptSafe(Asset(report_assets::kUplotJs, report_assets::kUplotJsSize))},
      {"REPORT_JS", ScriptSafe(Asset(report_assets::kReportJs, report_assets::kReportJsSize))},
  };
  const std::string_view tpl = Asset(report_assets::kReportHtml, report_assets::kReportHtmlSize);
  std::string out;
  out.reserve(tpl.size() + body.size() + report_assets::kUplotJsSize + 4096);
  size_t pos = 0;
  while (pos < tpl.size()) {
    const size_t open = tpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    const size_t close = tpl.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    const std::string_view key = tpl.substr(open + 2, close - open - 2);
    out.append(tpl.substr(pos, open - pos));
    bool found = false;
    for (const auto& [name, value] : values)
      if (key == name) out += value, found = true;
    if (!found) out.append(tpl.substr(open, close + 2 - open));
    pos = close + 2;
  }
  out.append(tpl.substr(pos));
  return out;
}

}  // namespace html
}  // namespace parity
