// The console summary of `check --dataset` and the ranking's headline.
#include <fmt/format.h>

#include "report/dataset_report.h"
#include "report/text_escape.h"

namespace parity {

std::string DatasetHeadline(const DatasetReport& r) {
  if (r.ranking.empty()) return "";
  const DatasetRankEntry& top = r.ranking.front();
  int64_t flips = 0, located = 0;
  for (const auto& l : r.located) {
    flips += l.flipped && l.first;
    located += l.first.has_value();
  }
  const std::string where =
      top.node.empty() || top.node == top.fused_node
          ? fmt::format("{} '{}'", top.op_type, top.fused_node)
          : fmt::format("{} '{}' (node '{}')", top.op_type, top.fused_node, top.node);
  if (flips > 0) return fmt::format("{} of {} located flips first diverge at {}", top.flips, flips, where);
  return fmt::format("{} of {} located samples first diverge at {}", top.samples, located, where);
}

std::string DatasetModuleHeadline(const DatasetReport& r) {
  if (r.module_ranking.empty()) return "";
  const DatasetModuleRank& top = r.module_ranking.front();
  int64_t flips = 0, located = 0;
  for (const auto& l : r.located) {
    flips += l.flipped && l.first;
    located += l.first.has_value();
  }
  if (flips > 0) return fmt::format("{} of {} located flips first diverge in module {}", top.flips, flips, top.module);
  return fmt::format("{} of {} located samples first diverge in module {}", top.samples, located, top.module);
}

namespace {

std::string Line(const DatasetOutputSummary& s, int64_t count) {
  std::string line = fmt::format(
      "  {}: {} of {} out of tolerance; max_abs p50 {:.3g} p99 {:.3g} max {:.3g}; cosine min {:.6g}; "
      "SQNR p1 {:.3g} dB; mismatch share p99 {:.3g}",
      s.name, s.failed, count, s.max_abs.p50, s.max_abs.p99, s.max_abs.max, s.cosine.min, s.snr_db.p1,
      s.mismatch_share.p99);
  if (s.classifier)
    line += fmt::format("; top-1 agreement {:.2f}% ({} flipped)", 100 * s.top1_agreement(), s.flipped.size());
  return line + "\n";
}

}  // namespace

std::string FormatDatasetSummary(const DatasetReport& r) {
  // The first line names the deployed config and the ONNX Runtime release, as check's (issue 54).
  std::string out = fmt::format("{}: {} [{}]{}: {} samples of {} judged against {} ({} engine, {:.1f} samples/s){}\n",
                                OverallVerdictName(r.overall), ConsoleName(r.model), r.target.Label(),
                                r.env.ort_version.empty() ? "" : " onnxruntime " + r.env.ort_version, r.count,
                                ConsoleName(r.source), r.reference, r.engine,
                                r.seconds > 0 ? static_cast<double>(r.count) / r.seconds : 0.0,
                                r.skipped > 0 ? fmt::format("; {} bad samples skipped", r.skipped) : "");
  for (const auto& s : r.summaries) out += Line(s, r.count);
  if (!r.worst.empty()) {
    out += "worst samples:";
    for (size_t i = 0; i < r.worst.size() && i < 3; ++i)
      out += fmt::format(" {} ({} score {:.3g})", ConsoleName(r.worst[i].id), ConsoleName(r.worst[i].output),
                         r.worst[i].score);  // a file name may hold a newline: it must not split the line
    out += "\n";
  }
  if (const std::string h = DatasetHeadline(r); !h.empty()) out += h + "\n";
  if (const std::string h = DatasetModuleHeadline(r); !h.empty()) out += h + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace parity
