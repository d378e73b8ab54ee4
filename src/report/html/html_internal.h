// Pieces of the HTML writer (html.cc assembles, html_sections.cc renders the
// sections). Internal to src/report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/check/check_result.h"

namespace parity::html {

std::string Esc(std::string_view s);  // HtmlEscape
// Esc with a <wbr> after each separator (/ + , =) of every token longer
// than 24 characters (a name's own words, `_`-joined, stay whole), so that node paths, op chains
// (Conv+MaxPool+Conv+...) and commands wrap at their separators and never
// mid-word (issue 54); shorter tokens and prose stay as written. Element
// text only, never an attribute.
std::string Breakable(std::string_view s);
std::string Num(double v);            // 4 significant digits; inf, -inf, nan
// <span class="pill pass">PASS</span>; `status` is PASS/FAIL/SKIPPED or
// pass/fail/unchecked (the class is its lowercase form).
std::string Pill(std::string_view status);
// A JSON value as short text: strings unquoted, numbers as written, others dumped.
std::string JsonText(const nlohmann::json& j);

// The page every report writes: the report template with `title` (escaped
// here), the embedded uPlot and report CSS/JS, `body` (HTML) and `data`
// (what the page's script draws) filled in, in one pass: text substituted in
// is never scanned again.
std::string ReportPage(std::string_view title, const std::string& body, const nlohmann::json& data);

// The outputs worth a histogram: failing first, then the rest, at most `max`;
// as (sample index, output index).
std::vector<std::pair<size_t, size_t>> HistogramOutputs(const CheckReport& r, size_t max);

std::string NavSection(const CheckReport& r);
std::string VerdictSection(const CheckReport& r);
std::string FailedTestsSection(const CheckReport& r);
std::string SamplesSection(const CheckReport& r);
std::string LayerCurveSection(const CheckReport& r);
// The per-layer precision of a QDQ / float16 model (docs/quantized.md): SQNR along the graph.
std::string QuantSection(const CheckReport& r);
std::string LocateSection(const CheckReport& r);
// --model-explorer: links to the node-data files and the commands that open them.
std::string ModelExplorerSection(const CheckReport& r);
// The same section for any report (the dataset report's too).
std::string ModelExplorerLinksSection(const ModelExplorerLinks& m);
std::string HistogramsSection(const CheckReport& r);
std::string PerformanceSection(const CheckReport& r);
std::string StagesSection(const CheckReport& r);
std::string AlignmentSection(const CheckReport& r);
std::string EnvironmentSection(const CheckReport& r);

inline constexpr size_t kMaxHistograms = 24;
inline constexpr size_t kMaxTableRows = 1000;

}  // namespace parity::html
