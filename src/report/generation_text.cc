// The generation section's console lines and HTML section (generation_report.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/generation_report.h"
#include "report/text_escape.h"

namespace parity {

std::string FormatGeneration(const GenerationResult& g, size_t max_rows) {
  std::string out = fmt::format("generation: {} {}/{} tokens agree with PyTorch", CheckVerdictName(g.verdict),
                                g.tokens_agreeing, g.length);
  if (g.first_differing_step) out += fmt::format(" (first differs at step {})", *g.first_differing_step);
  double worst = 0;
  for (const auto& s : g.steps) worst = std::max(worst, s.logits_score);
  out += fmt::format("; logits error up to {:.3g}x the tolerance, growth x{:.3g}", worst, g.error_growth);
  out += fmt::format("; ORT loop {:.1f} ms\n", g.loop_ms);
  size_t shown = 0;
  for (const auto& s : g.steps) {
    if (s.tokens_agree && s.logits != Verdict::kFail && s.cache != Verdict::kFail) continue;
    if (shown++ == max_rows) {
      out += "  ...\n";
      break;
    }
    out += fmt::format("  step {}: tokens PyTorch {} ORT {}; logits {} (max_abs {:.3g}, band {:.3g}); cache {}{}\n",
                       s.step, fmt::join(s.torch_tokens, ","), fmt::join(s.ort_tokens, ","), VerdictName(s.logits),
                       s.logits_max_abs, s.logits_band, VerdictName(s.cache),
                       s.cache == Verdict::kFail ? fmt::format(" ({} max_abs {:.3g})", s.cache_worst, s.cache_max_abs)
                                                 : "");
  }
  for (const auto& c : g.checks)
    if (c.status == Verdict::kFail) out += fmt::format("  {}: {}\n", c.id, c.message);
  return out;
}

namespace {

double LogY(double v, double lo, double hi, double top, double height) {
  const double l = std::log10(std::clamp(v, lo, hi));
  return top + height * (std::log10(hi) - l) / (std::log10(hi) - std::log10(lo));
}

}  // namespace

std::string GenerationSvg(const GenerationResult& g) {
  const double w = 640, h = 240, left = 60, top = 12, pw = w - left - 12, ph = h - top - 36;
  double lo = 1e300, hi = 0;
  for (const auto& s : g.steps)
    for (double v : {s.logits_max_abs, s.logits_band})
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) lo = 1e-8, hi = 1;
  lo = std::pow(10, std::floor(std::log10(lo))), hi = std::pow(10, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  const size_t n = std::max<size_t>(g.steps.size(), 2);
  auto x = [&](size_t i) { return left + pw * static_cast<double>(i) / static_cast<double>(n - 1); };
  std::string err, band;
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const auto& s = g.steps[i];
    if (s.logits == Verdict::kUnchecked) continue;
    err += fmt::format("{:.1f},{:.1f} ", x(i), LogY(s.logits_max_abs, lo, hi, top, ph));
    band += fmt::format("{:.1f},{:.1f} ", x(i), LogY(s.logits_band, lo, hi, top, ph));
  }
  std::string s = fmt::format(
      "<svg class=\"generation-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"logits error per step\">\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
      "fill=\"none\" stroke=\"#bbb\"/>\n", w, h, left, top, pw, ph);
  for (double d = lo; d <= hi * 1.001; d *= 10)
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{:.0e}</text>\n", left - 4,
                     LogY(d, lo, hi, top, ph) + 3, d);
  s += fmt::format("<polyline class=\"band\" fill=\"none\" stroke=\"#d33\" stroke-dasharray=\"4 3\" points=\"{}\"/>\n",
                   band);
  s += fmt::format("<polyline class=\"error\" fill=\"none\" stroke=\"#36c\" stroke-width=\"2\" points=\"{}\"/>\n", err);
  if (g.first_differing_step)
    s += fmt::format("<line class=\"departs\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e80\"/>\n",
                     x(static_cast<size_t>(*g.first_differing_step)), top, top + ph);
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">step 0 &#8230; {} (blue: logits max_abs; red dashed: "
                   "the tolerance's band)</text>\n</svg>\n", left, h - 8, g.steps.empty() ? 0 : g.steps.size() - 1);
  return s;
}

std::string GenerationHtmlSection(const GenerationResult& g) {
  std::string s = "<section id=\"generation\">\n<h2>Generation, step by step</h2>\n";
  s += fmt::format("<p><b>{}</b>: {}/{} tokens agree with PyTorch{}; the logits error grew x{:.3g} over the "
                   "judged steps; the ORT loop took {:.1f} ms.</p>\n",
                   CheckVerdictName(g.verdict), g.tokens_agreeing, g.length,
                   g.first_differing_step ? fmt::format(" (first differing step: {})", *g.first_differing_step) : "",
                   g.error_growth, g.loop_ms);
  if (g.steps_not_listed > 0)
    s += fmt::format("<p>{} steps in the middle of the loop are not listed (at most {} are); the verdict counts "
                     "every step.</p>\n", g.steps_not_listed, g.steps.size());
  s += GenerationSvg(g);
  s += "<table class=\"generation\">\n<tr><th>check</th><th>status</th><th>what</th></tr>\n";
  for (const auto& c : g.checks)
    s += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>\n", HtmlEscape(c.id),
                     CheckVerdictName(c.status), HtmlEscape(c.message));
  s += "</table>\n<table class=\"generation-steps\">\n<tr><th>step</th><th>PyTorch</th><th>ORT</th><th>logits "
       "max_abs</th><th>band</th><th>logits</th><th>cache</th></tr>\n";
  for (const auto& st : g.steps)
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3g}</td><td>{:.3g}</td><td>{}</td><td>{}</td></tr>\n",
                     st.step, fmt::join(st.torch_tokens, ","), fmt::join(st.ort_tokens, ","), st.logits_max_abs,
                     st.logits_band, VerdictName(st.logits), VerdictName(st.cache));
  return s + "</table>\n</section>\n";
}

namespace {

std::string PromptRow(const GenerationPrompt& p) {
  if (!p.error.empty()) return fmt::format("did not run: {}", p.error);
  std::string row = fmt::format("{}/{} tokens agree", p.tokens_agreeing, p.length);
  if (p.first_differing_step) row += fmt::format(", first differs at step {}", *p.first_differing_step);
  if (p.first_failing_logits) row += fmt::format(", logits leave the tolerance at step {}", *p.first_failing_logits);
  row += fmt::format("; logits error up to {:.3g}x the tolerance", p.worst_logits_score);
  return p.reason.empty() ? row : row + "; fails: " + p.reason;
}

}  // namespace

std::string FormatGenerationPrompts(const std::vector<GenerationPrompt>& prompts, size_t max_rows) {
  if (prompts.empty()) return "";
  size_t passed = 0;
  for (const auto& p : prompts) passed += p.verdict != Verdict::kFail;
  std::string out = fmt::format("prompts: {} of {} pass\n", passed, prompts.size());
  size_t shown = 0;
  for (const auto& p : prompts) {
    if (p.verdict != Verdict::kFail) continue;
    if (shown++ == max_rows) {
      out += "  ...\n";
      break;
    }
    out += fmt::format("  {}: {}\n", p.dump, PromptRow(p));
  }
  return out;
}

std::string GenerationPromptsHtml(const std::vector<GenerationPrompt>& prompts) {
  if (prompts.empty()) return "";
  std::string s = "<section id=\"generation-prompts\">\n<h2>Generation, prompt by prompt</h2>\n"
                  "<table class=\"generation\">\n<tr><th>dump</th><th>status</th><th>prompt</th><th>what</th></tr>\n";
  for (const auto& p : prompts)
    s += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td>{} tokens</td><td>{}</td></tr>\n",
                     HtmlEscape(p.dump), CheckVerdictName(p.verdict), p.prompt_length, HtmlEscape(PromptRow(p)));
  return s + "</table>\n</section>\n";
}

}  // namespace parity
