#include "report/console/torch_console.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "engine/torch/torch_dump.h"
#include "report/locate_report.h"
#include "report/text_escape.h"

namespace parity {
namespace {

std::string Shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

// A reason with its quoted names taken out: "eval BatchNorm folded into the
// Conv node before it" is one kind of reason, whatever the node.
std::string ReasonKind(const std::string& reason) {
  // A quote opens a name after a space or '(' and closes it before a space or
  // punctuation; an apostrophe inside a word ("module's") is text.
  const auto word = [&](size_t i) { return i < reason.size() && std::isalnum(static_cast<unsigned char>(reason[i])); };
  std::string kind;
  bool quoted = false;
  for (size_t i = 0; i < reason.size(); ++i) {
    const bool opens = !quoted && reason[i] == '\'' && (i == 0 || !word(i - 1));
    const bool closes = quoted && reason[i] == '\'' && !word(i + 1);
    if (opens || closes) {
      quoted = opens;
      if (closes && !kind.empty() && kind.back() == ' ') kind.pop_back();
    } else if (!quoted) {
      kind += reason[i];
    }
  }
  return kind;
}

// Unchecked layers whose reason is of a kind at least this many share are
// listed once per kind under the table, not once per row (issue 54: twenty
// "folded into the Conv node" lines for a ResNet's BatchNorms).
constexpr size_t kGroupReasonsFrom = 3;
constexpr size_t kModulesPerGroup = 8;

std::string ModuleOf(const LayerAlignment& a) {
  TorchLayer layer;
  layer.module = a.module;
  layer.call = a.call;
  layer.output_index = a.output_index;
  return TorchDump::Describe(layer);
}

}  // namespace

std::string FormatAlignTable(const TorchComparison& c, bool all_layers) {
  std::string out =
      fmt::format("{:<40} {:<5} {:<9} {:<50} {}\n", "module", "how", "status", "onnx tensor", "max_abs / reason");
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // reason kind -> modules, first seen first
  std::map<std::string, size_t> kind_count;
  for (const LayerVerdict& v : c.layers)
    if ((all_layers || v.alignment.leaf) && v.status == Verdict::kUnchecked)
      ++kind_count[ReasonKind(v.alignment.reason)];
  for (const LayerVerdict& v : c.layers) {
    const LayerAlignment& a = v.alignment;
    if (!all_layers && !a.leaf) continue;
    const std::string module = ModuleOf(a);
    if (v.status == Verdict::kUnchecked && kind_count[ReasonKind(a.reason)] >= kGroupReasonsFrom) {
      const std::string kind = ReasonKind(a.reason);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == kind; });
      if (it == groups.end()) it = groups.insert(groups.end(), {kind, {}});
      it->second.push_back(module);
      continue;
    }
    std::string detail;
    if (v.status == Verdict::kUnchecked)
      detail = a.reason;
    else
      detail =
          fmt::format("{:.3g}{}", v.metrics.max_abs, a.how == AlignHow::kValue ? "  (" + a.reason + ")" : "");
    out += fmt::format("{:<40} {:<5} {:<9} {:<50} {}\n", Shorten(module, 40), AlignHowName(a.how),
                       VerdictName(v.status), Shorten(a.tensor.empty() ? "-" : a.tensor, 50), detail);
  }
  for (const auto& [kind, modules] : groups) {
    std::vector<std::string> shown(modules.begin(), modules.begin() + std::min(modules.size(), kModulesPerGroup));
    out += fmt::format("{} layers {}: {}: {}{}\n", modules.size(), VerdictName(Verdict::kUnchecked), kind,
                       fmt::join(shown, ", "),
                       modules.size() > shown.size() ? fmt::format(", ... {} more", modules.size() - shown.size())
                                                     : std::string());
  }
  return out;
}

std::string FormatAlignSummary(const TorchComparison& c) {
  std::string out = fmt::format("\n{}; {} pass, {} fail\n", c.AlignmentLine(), c.Count(Verdict::kPass),
                                c.Count(Verdict::kFail));
  out += fmt::format("{}\n", c.paths.Describe());
  if (const std::string unchecked = c.UncheckedExpectedLine(); !unchecked.empty()) out += unchecked + "\n";
  out += fmt::format("{}\n", c.VerdictLine());
  for (const auto& t : c.outputs.tensors)
    if (t.status == Verdict::kFail) out += fmt::format("output '{}' differs: {}\n", ConsoleName(t.name), t.reason);
  for (const auto& f : c.outputs.findings)
    out += fmt::format("output '{}': {} (PyTorch {}, ONNX {})\n", ConsoleName(f.name), FindingKindName(f.kind), f.reference,
                       f.test);
  return out;
}

void PrintTorchLocate(const TorchLocateResult& result, const std::string& target_label, std::FILE* out) {
  const auto& e = result.exported;
  fmt::print(out, "export vs PyTorch ({})\n", e.AlignmentLine());
  fmt::print(out, "  {}\n", e.VerdictLine());
  fmt::print(out, "deployed [{}] outputs vs PyTorch: {}\n", target_label, result.deployed.passed() ? "pass" : "FAIL");
  for (const auto& t : result.deployed.tensors)
    if (t.status == Verdict::kFail) fmt::print(out, "  '{}': {}\n", t.name, t.reason);
  if (result.fusion) {
    fmt::print(out, "the export agrees with PyTorch but the deployed config does not: localizing the fusion\n");
    PrintLocateSummary(*result.fusion, out);
  }
}

}  // namespace parity
