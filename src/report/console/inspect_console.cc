#include "report/console/inspect_console.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/build_info.h"

namespace parity {
namespace {

std::string OpName(const OpCount& op) { return op.domain.empty() ? op.op_type : op.domain + "." + op.op_type; }

}  // namespace

std::string FormatModelInfo(const ModelInfo& info, const std::vector<Finding>& findings) {
  std::string s;
  auto line = [&s](std::string text) { s += text + "\n"; };
  std::string opsets;
  for (const auto& [domain, version] : info.opsets)
    opsets += fmt::format("{}{}={}", opsets.empty() ? "" : ", ", domain.empty() ? "ai.onnx" : domain, version);
  line(fmt::format("ir_version    {}", info.ir_version));
  line(fmt::format("opsets        {}", opsets));
  line(fmt::format("producer      {} {}", info.producer_name.empty() ? "(none)" : info.producer_name,
                   info.producer_version));
  line(fmt::format("graph         {} ({} nodes, {} initializers, {:.2f} MiB of weights)", info.graph_name,
                   info.node_count, info.initializer_count, info.initializer_bytes / 1048576.0));
  line("inputs");
  for (const auto& v : info.inputs) line(fmt::format("  {:<24} {}", v.name, v.type.ToString()));
  line("outputs");
  for (const auto& v : info.outputs) line(fmt::format("  {:<24} {}", v.name, v.type.ToString()));
  line("ops");
  for (const auto& op : info.op_counts) line(fmt::format("  {:<32} {}", OpName(op), op.count));
  line(fmt::format("checker       {}", CheckerVerdict(findings)));
  if (findings.empty()) line("  no findings");
  for (const auto& f : findings)
    line(fmt::format("  {:<8} {}: {}", SeverityName(f.severity), f.stage, f.message));
  return s;
}

std::string FormatScopeSummary(const ScopeSummary& s, size_t max_modules) {
  std::string out;
  if (s.source == ScopeSource::kNone) return "node scopes   none recorded (no PyTorch module information)\n";
  out += fmt::format("node scopes   {} of {} nodes inside a module, from {} ({} modules)\n", s.scoped, s.nodes,
                     s.source == ScopeSource::kMetadata ? "metadata_props (pkg.torch.onnx.name_scopes)"
                                                        : "node names (TorchScript exporter)",
                     s.modules.size());
  const size_t shown = std::min(max_modules, s.modules.size());
  for (size_t k = 0; k < shown; ++k)
    out += fmt::format("  {:<48} {}\n", s.modules[k].first, s.modules[k].second);
  if (shown < s.modules.size()) out += fmt::format("  ... {} more (--json lists them all)\n", s.modules.size() - shown);
  return out;
}

std::string CheckerVerdict(const std::vector<Finding>& findings) {
  const bool error = std::any_of(findings.begin(), findings.end(),
                                 [](const Finding& f) { return f.severity == Severity::kError; });
  const bool skipped = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.stage == "checker" && f.message.starts_with("checker skipped");
  });
  return fmt::format("{} (ONNX {} checker and shape inference; IR <= {}, opset <= {})",
                     error ? "FAIL" : skipped ? "skipped" : "pass", PARITY_ONNX_VERSION, CheckerMaxIrVersion(),
                     CheckerMaxOpset());
}

}  // namespace parity
