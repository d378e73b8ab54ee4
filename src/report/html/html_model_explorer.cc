// The HTML report's Model Explorer section (issue 45, docs/model-explorer.md):
// the node-data files of --model-explorer DIR as links, and the commands
// that open them in Model Explorer.
#include <fmt/format.h>

#include <cctype>
#include <string_view>

#include "report/html/html_internal.h"

namespace parity::html {
namespace {

// A path as a relative URL: bytes outside the unreserved set and '/' percent-encoded.
std::string UrlPath(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

std::string ModelExplorerSection(const CheckReport& r) {
  return r.model_explorer ? ModelExplorerLinksSection(*r.model_explorer) : "";
}

std::string ModelExplorerLinksSection(const ModelExplorerLinks& m) {
  std::string s = "<section id=\"model-explorer\">\n<h2>On the graph: Model Explorer</h2>\n";
  s += fmt::format(
      "<p class=\"note\">Node data for Google's Model Explorer in <span class=\"mono\">{}</span>: each node "
      "coloured by its error in tolerance units (green at most 0.5, yellow up to 1, red over 1), its local "
      "error, pass/fail/unchecked, its PyTorch module and the fused node covering it; the optimized graph's "
      "fused nodes with their local error and what they cover. Install it with <span class=\"mono\">pip install "
      "ai-edge-model-explorer model-explorer-onnx</span> and open:</p>\n",
      Breakable(m.dir));
  // A command is one long line: it wraps inside its box (report.css `pre.command`).
  for (const auto& c : m.commands) s += fmt::format("<pre class=\"mono command\">{}</pre>\n", Breakable(c));
  s += "<ul class=\"mono\">\n";
  for (const auto& f : m.files) {
    const std::string href = m.href_dir.empty() ? f : m.href_dir + "/" + f;
    s += fmt::format("<li><a href=\"{}\">{}</a></li>\n", Esc(UrlPath(href)), Breakable(f));
  }
  s += "</ul>\n</section>\n";
  return s;
}

}  // namespace parity::html
