#include "report/torch_console.h"

#include <fmt/format.h>

#include "engine/torch/torch_dump.h"
#include "report/text_escape.h"

namespace parity {
namespace {

std::string Shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

}  // namespace

std::string FormatAlignTable(const TorchComparison& c, bool all_layers) {
  std::string out =
      fmt::format("{:<40} {:<5} {:<9} {:<50} {}\n", "module", "how", "status", "onnx tensor", "max_abs / reason");
  for (const LayerVerdict& v : c.layers) {
    const LayerAlignment& a = v.alignment;
    if (!all_layers && !a.leaf) continue;
    TorchLayer layer;
    layer.module = a.module;
    layer.call = a.call;
    layer.output_index = a.output_index;
    const std::string module = TorchDump::Describe(layer);
    std::string detail;
    if (v.status == Verdict::kUnchecked)
      detail = a.reason;
    else
      detail =
          fmt::format("{:.3g}{}", v.metrics.max_abs, a.how == AlignHow::kValue ? "  (" + a.reason + ")" : "");
    out += fmt::format("{:<40} {:<5} {:<9} {:<50} {}\n", Shorten(module, 40), AlignHowName(a.how),
                       VerdictName(v.status), Shorten(a.tensor.empty() ? "-" : a.tensor, 50), detail);
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

}  // namespace parity
