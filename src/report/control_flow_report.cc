#include "report/control_flow_report.h"

#include <fmt/format.h>

#include "report/text_escape.h"

namespace parity {

nlohmann::json ControlFlowToJson(const ControlFlowReport& r) {
  if (!r.present) return nullptr;
  nlohmann::json ifs = nlohmann::json::array();
  for (const auto& c : r.ifs)
    ifs.push_back({{"node", c.node}, {"then_samples", c.then_samples}, {"else_samples", c.else_samples}});
  return {{"present", true}, {"samples", r.samples}, {"ifs", ifs}, {"notes", r.notes}, {"unjudged", r.unjudged}};
}

std::string FormatControlFlow(const ControlFlowReport& r, const char* indent) {
  if (!r.present) return "";
  std::string out = fmt::format("{}control flow: If/Loop bodies observed through an inlined copy per sample ({} sample{})\n",
                                indent, r.samples, r.samples == 1 ? "" : "s");
  for (const auto& c : r.ifs)
    out += fmt::format("{}  If {}: then_branch in {} of {} samples, else_branch in {}\n", indent, ConsoleName(c.node),
                       c.then_samples, r.samples, c.else_samples);
  for (const auto& n : r.notes) out += fmt::format("{}  note: {}\n", indent, ConsoleName(n));
  for (const auto& n : r.unjudged) out += fmt::format("{}  not judged: {}\n", indent, ConsoleName(n));
  return out;
}

void PrintControlFlow(std::FILE* out, const ControlFlowReport& r, const char* indent) {
  fmt::print(out, "{}", FormatControlFlow(r, indent));
}

std::string ControlFlowHtml(const ControlFlowReport& r) {
  if (!r.present) return "";
  std::string s = fmt::format("<div class=\"note control-flow\" id=\"control-flow\"><b>control flow:</b> If/Loop "
                              "bodies observed through an inlined copy per sample ({} samples)<ul>\n", r.samples);
  for (const auto& c : r.ifs)
    s += fmt::format("<li data-if=\"{}\">If <span class=\"mono\">{}</span>: then_branch in {} of {} samples, "
                     "else_branch in {}</li>\n", HtmlEscape(c.node), HtmlEscape(c.node), c.then_samples, r.samples,
                     c.else_samples);
  for (const auto& n : r.notes) s += fmt::format("<li class=\"control-flow-note\">{}</li>\n", HtmlEscape(n));
  return s + "</ul></div>\n";
}

}  // namespace parity
