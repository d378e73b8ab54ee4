#include "report/control_flow_writer.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/visible_text.h"
#include "report/text_escape.h"

namespace parity {

nlohmann::json ControlFlowToJson(const ControlFlowReport& r) {
  if (!r.present) return nullptr;
  const bool judged = !r.judged_against.empty();
  nlohmann::json ifs = nlohmann::json::array();
  for (const auto& c : r.ifs) {
    nlohmann::json j = {{"node", c.node}, {"then_samples", c.then_samples}, {"else_samples", c.else_samples}};
    if (judged) j.update({{"then_judged", c.then_judged}, {"else_judged", c.else_judged}});
    ifs.push_back(std::move(j));
  }
  nlohmann::json loops = nlohmann::json::array();
  for (const auto& l : r.loops) {
    nlohmann::json j = {{"node", l.node}, {"ran_samples", l.ran_samples}, {"most_iterations", l.most_iterations}};
    if (judged) j["ran_judged"] = l.ran_judged;
    loops.push_back(std::move(j));
  }
  nlohmann::json out = {{"present", true}, {"samples", r.samples}, {"ifs", ifs}, {"loops", loops},
                        {"notes", r.notes}, {"unjudged", r.unjudged}};
  if (judged) out["judged_against"] = r.judged_against;
  return out;
}

namespace {

// " (1 judged against PyTorch)" after a count, "" where none are counted.
std::string JudgedOf(const ControlFlowReport& r, int judged, bool first) {
  if (r.judged_against.empty()) return "";
  return first ? fmt::format(" ({} judged against {})", judged, r.judged_against) : fmt::format(" ({} judged)", judged);
}

// One line per If and per Loop, without indent or markup.
std::vector<std::string> CoverageLines(const ControlFlowReport& r) {
  std::vector<std::string> lines;
  for (const auto& c : r.ifs)
    lines.push_back(fmt::format("then_branch in {} of {} samples{}, else_branch in {}{}", c.then_samples, r.samples,
                                JudgedOf(r, c.then_judged, true), c.else_samples, JudgedOf(r, c.else_judged, false)));
  for (const auto& l : r.loops)
    lines.push_back(fmt::format("body run by {} of {} samples{}, at most {} iteration{}", l.ran_samples, r.samples,
                                JudgedOf(r, l.ran_judged, true), l.most_iterations,
                                l.most_iterations == 1 ? "" : "s"));
  return lines;
}

std::string CoverageNode(const ControlFlowReport& r, size_t i) {
  return i < r.ifs.size() ? r.ifs[i].node : r.loops[i - r.ifs.size()].node;
}

}  // namespace

std::string FormatControlFlow(const ControlFlowReport& r, const char* indent) {
  if (!r.present) return "";
  std::string out = fmt::format("{}control flow: If/Loop bodies observed through an inlined copy per sample ({} sample{})\n",
                                indent, r.samples, r.samples == 1 ? "" : "s");
  const auto lines = CoverageLines(r);
  for (size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("{}  {} {}: {}\n", indent, i < r.ifs.size() ? "If" : "Loop", ConsoleName(CoverageNode(r, i)),
                       lines[i]);
  for (const auto& n : r.notes) out += fmt::format("{}  note: {}\n", indent, ConsoleName(n));
  // Whole, as the verdict's own "not judged:" lines: each ends with how to
  // judge it (ConsoleName would cut that off a long line).
  for (const auto& n : r.unjudged) out += fmt::format("{}  not judged: {}\n", indent, ShowControls(n));
  return out;
}

void PrintControlFlow(std::FILE* out, const ControlFlowReport& r, const char* indent) {
  fmt::print(out, "{}", FormatControlFlow(r, indent));
}

std::string ControlFlowHtml(const ControlFlowReport& r) {
  if (!r.present) return "";
  std::string s = fmt::format("<div class=\"note control-flow\" id=\"control-flow\"><b>control flow:</b> If/Loop "
                              "bodies observed through an inlined copy per sample ({} samples)<ul>\n", r.samples);
  const auto lines = CoverageLines(r);
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool is_if = i < r.ifs.size();
    s += fmt::format("<li data-{}=\"{}\">{} <span class=\"mono\">{}</span>: {}</li>\n", is_if ? "if" : "loop",
                     HtmlEscape(CoverageNode(r, i)), is_if ? "If" : "Loop", HtmlEscape(CoverageNode(r, i)),
                     HtmlEscape(lines[i]));
  }
  for (const auto& n : r.notes) s += fmt::format("<li class=\"control-flow-note\">{}</li>\n", HtmlEscape(n));
  return s + "</ul></div>\n";
}

}  // namespace parity
