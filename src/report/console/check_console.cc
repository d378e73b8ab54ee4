#include "report/console/check_console.h"
#include "report/sample_notes.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "report/control_flow_writer.h"
#include "report/ep_report.h"
#include "report/console/ansi.h"
#include "report/text_escape.h"
#include "report/check_summary.h"
#include "report/quant_report.h"
#include "report/generation_report.h"

namespace parity {

namespace {

const char* StatusColor(Verdict s) {
  switch (s) {
    case Verdict::kPass:
      return ansi::kBoldGreen;
    case Verdict::kFail:
      return ansi::kRed;
    case Verdict::kUnchecked:
      return ansi::kYellow;
  }
  return ansi::kReset;
}

std::string Bytes(int64_t b) {
  if (b <= 0) return "n/a";
  return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024.0));
}

}  // namespace

namespace {

// One line per config's latency, the non-deterministic ones marked.
template <typename Paint>
std::string LatencyLines(const CheckReport& r, const Paint& paint) {
  std::string out;
  for (const auto& p : r.performance)
    out += fmt::format(
        "latency [{}]{}: mean {:.3f} ms, p50 {:.3f}, p95 {:.3f}, p99 {:.3f} ({} run{}{}); session {:.1f} ms; "
        "peak RSS {}{}{}\n",
        p.config, p.inputs.empty() ? "" : fmt::format(" at {} (sample '{}')", p.inputs, p.sample), p.latency.mean_ms,
        p.latency.p50_ms, p.latency.p95_ms, p.latency.p99_ms, p.latency.runs, p.latency.runs == 1 ? "" : "s",
        p.latency.reused_runs > 0 ? fmt::format(", {} the check's own", p.latency.reused_runs) : std::string(),
        p.session_creation_ms, Bytes(p.peak_rss_bytes),
        p.gpu_peak_bytes ? fmt::format("; GPU arena peak {}", Bytes(*p.gpu_peak_bytes)) : std::string(),
        p.deterministic ? "" : paint(ansi::kYellow, "; NOT deterministic"));
  return out;
}

// The arithmetic named, and the TF32 re-run's evidence (docs/gpu.md).
template <typename Paint>
std::string WhyLines(const CheckReport& r, const Paint& paint) {
  std::string out;
  if (r.arithmetic)
    out += fmt::format("{} {}\n", paint(ansi::kYellow, "why:"), ConsoleName(ArithmeticLine(*r.arithmetic)));
  if (!r.tf32_probe.empty()) out += fmt::format("tf32: {}\n", ConsoleName(r.tf32_probe));
  return out;
}

// Warnings that did not fail the check (under --strict they are failed tests).
template <typename Paint>
std::string WarningLines(const CheckReport& r, const Paint& paint) {
  std::string out;
  for (const auto& w : r.Warnings())
    if (w.status != Verdict::kFail) out += fmt::format("{} {} {}\n", paint(ansi::kYellow, "warning:"), w.id, w.message);
  return out;
}

// Samples refused without that being a failure, listed apart.
template <typename Paint>
std::string RefusalLines(const CheckReport& r, const Paint& paint) {
  const auto refused = r.ExpectedRefusals();
  if (refused.empty()) return "";
  std::string out = fmt::format("expected refusals ({}, not failures):\n", refused.size());
  for (const SampleResult* s : refused)
    out += fmt::format("  {} {}: {}\n", paint(ansi::kYellow, s->StatusWord()), ConsoleName(s->name),
                       s->error);
  return out;
}

// The quantized table, the agreement that fits each output (top-1,
// detections) and the decode loop's, prompt by prompt.
std::string AgreementLines(const CheckReport& r, size_t max_rows) {
  std::string out;
  if (r.quant) out += FormatQuantTable(*r.quant, max_rows);
  out += FormatTop1(r.top1) + FormatDetections(r.detections);
  if (r.generation) out += FormatGeneration(*r.generation, max_rows);
  return out + FormatGenerationPrompts(r.generation_prompts, max_rows);
}

// The verdict's lines. The first says what was judged as deployed: the
// verdict, the model, the target config and the ONNX Runtime release (issue 54).
template <typename Paint>
std::string HeadLines(const CheckReport& r, const Paint& paint) {
  const std::string model = r.model ? r.model->path : std::string("model");
  std::string out = fmt::format(
      "{} {}{}{}\n", paint(StatusColor(r.overall), r.OverallWord()), model,
      r.config ? fmt::format(" [{}]", r.config->target.Label()) : std::string(),
      r.env && !r.env->ort_version.empty() ? " onnxruntime " + r.env->ort_version : std::string());
  out += JudgedAgainst(r) + "\n";
  for (const auto& why : r.coverage.missing) out += paint(ansi::kYellow, "not judged: " + why) + "\n";
  if (r.env) out += fmt::format("onnxruntime {} ({})\n", r.env->ort_version, r.env->ort_library);
  for (const auto& n : r.notes) out += paint(ansi::kYellow, "note: " + n) + "\n";
  for (const auto& line : SampleNoteLines(r.sample_notes)) out += line + "\n";
  return out + FormatControlFlow(r.control_flow, "");
}

}  // namespace

std::string FormatCheckSummary(const CheckReport& r, const ConsoleStyle& style) {
  auto paint = [&](const char* color, std::string_view text) {
    return style.color ? fmt::format("{}{}{}", color, text, ansi::kReset) : std::string(text);
  };
  std::string out = HeadLines(r, paint);

  out += "stages:";
  for (const auto& s : r.stages)
    out += fmt::format("  {} {}", s.name, paint(StatusColor(s.status), CheckVerdictName(s.status)));
  out += "\n";

  const auto failed = FailedTestsCulpritFirst(r);  // the culprit first (issue 54)
  if (!failed.empty()) {
    out += fmt::format("failed tests ({}):\n", failed.size());
    for (size_t i = 0; i < failed.size(); ++i) {
      if (i == style.max_rows) {
        out += fmt::format("  ... {} more\n", failed.size() - i);
        break;
      }
      out += fmt::format("  {} {}\n", paint(ansi::kRed, failed[i].finding->id), failed[i].finding->message);
    }
  }

  out += WarningLines(r, paint);

  // The worst outputs: failures first, then by error relative to tolerance.
  struct Row {
    const SampleResult* sample;
    const OutputResult* output;
  };
  std::vector<Row> rows;
  for (const auto& s : r.samples)
    for (const auto& o : s.outputs) rows.push_back({&s, &o});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return WorseRow(a.output->comparison, b.output->comparison); });
  const size_t show = std::min<size_t>(rows.size(), std::min<size_t>(style.max_rows, 5));
  if (show > 0) out += "worst outputs:\n";
  for (size_t i = 0; i < show; ++i) {
    const TensorComparison& c = rows[i].output->comparison;
    const auto verdict = c.status == Verdict::kFail   ? paint(ansi::kRed, "fail")
                         : c.status == Verdict::kPass ? paint(ansi::kBoldGreen, "pass")
                                                      : paint(ansi::kYellow, "unchecked");
    out += fmt::format("  {} {}/{}", verdict, ConsoleName(rows[i].sample->name), ConsoleName(rows[i].output->output));
    if (c.status != Verdict::kUnchecked)
      out += fmt::format("  max_abs {} cosine {} mismatches {}/{}", ShortNumber(c.metrics.max_abs),
                         CosineText(c.metrics), c.metrics.mismatches, c.metrics.count);
    if (!c.reason.empty()) out += paint(ansi::kDim, "  " + c.reason);
    out += "\n";
    // The tolerance of each failed output, and of the worst one: a passing
    // check says it once, not once per output (issue 54).
    if (!c.tolerance.rules_fired.empty() && (i == 0 || c.status == Verdict::kFail))
      out += fmt::format("      tolerance: {}\n", c.tolerance.Why());
  }
  // One tolerance warning per output (each sample would repeat it).
  std::vector<std::string> warned;
  for (const auto& row : rows)
    for (const auto& w : row.output->comparison.tolerance.warnings) {
      if (std::find(warned.begin(), warned.end(), row.output->output) != warned.end()) continue;
      warned.push_back(row.output->output);
      out += paint(ansi::kYellow, fmt::format("  warning: {}: {}\n", ConsoleName(row.output->output), w));
    }
  for (const auto& s : r.samples)
    if (!s.error.empty() && s.status == Verdict::kFail)
      out += fmt::format("  {} {}: {}\n", paint(ansi::kRed, s.timed_out ? (s.over_memory ? "over memory" : "timeout") : "raised"), ConsoleName(s.name),
                         s.error);
  out += RefusalLines(r, paint);
  out += WhyLines(r, paint);
  for (const std::string& line : AssignmentLines(r.target_assignment)) out += fmt::format("target EP: {}\n", line);

  out += AgreementLines(r, style.max_rows);
  out += LatencyLines(r, paint);
  return out;
}

void PrintCheckSummary(const CheckReport& report, std::FILE* out) {
  ConsoleStyle style;
  style.color = WantsColor(out);
  style.max_rows = 20;
  fmt::print(out, "{}", FormatCheckSummary(report, style));
  std::fflush(out);
}

std::string FormatProgressBar(size_t done, size_t total, std::string_view label, int width) {
  done = std::min(done, total);
  const int filled = total == 0 ? width : static_cast<int>(done * static_cast<size_t>(width) / total);
  return fmt::format("[{}{}] {}/{} {}", std::string(filled, '#'), std::string(width - filled, ' '), done,
                     total, label);
}

ProgressBar::ProgressBar(size_t total, std::FILE* out) : ProgressBar(total, out, isatty(fileno(out)) != 0) {}

ProgressBar::ProgressBar(size_t total, std::FILE* out, bool enabled)
    : total_(total), out_(out), enabled_(enabled) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(size_t done, std::string_view label) {
  done_ = std::min(done, total_);
  if (!enabled_) return;
  std::string line = FormatProgressBar(done_, total_, label.substr(0, 60));
  const size_t width = line.size();
  if (width < last_width_) line += std::string(last_width_ - width, ' ');
  last_width_ = width;
  fmt::print(out_, "\r{}", line);
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (!enabled_ || last_width_ == 0) return;
  fmt::print(out_, "\r{}\r", std::string(last_width_, ' '));
  std::fflush(out_);
  last_width_ = 0;
}

}  // namespace parity
