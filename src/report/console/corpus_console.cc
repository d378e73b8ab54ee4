#include <fmt/format.h>

#include "core/visible_text.h"
#include "report/corpus_report.h"

namespace parity {

std::string FormatCorpusSummary(const CorpusResult& r) {
  const size_t n = r.prompts.size();
  auto q = [](const Quantiles& x) { return fmt::format("median {:.3g}, p95 {:.3g}, max {:.3g}", x.median, x.p95, x.max); };
  std::string out = fmt::format(
      "corpus: {} · {} prompts x {} steps, teacher-forced, ORT [{}], {} engine; top-{} of {} logits kept "
      "({} bytes a step)\n",
      r.pass ? "PASS" : "FAIL", n, r.steps, r.config, r.engine, r.top_k, r.vocab, r.bytes_per_step);
  if (r.genai) {
    out += fmt::format("  ORT GenAI package: {} (search {}; session options {}; onnxruntime-genai {}, onnxruntime {})\n",
                       r.genai->config_path, r.genai->search_json, r.genai->session_options_json,
                       r.genai->genai_version, r.genai->ort_version);
    out += r.genai->greedy
               ? fmt::format("  free-running (the runtime's own search): {} of {} prompts leave PyTorch's tokens "
                             "before teacher forcing does\n", r.prompts_free_departing, n)
               : "  free-running: not judged (the package's search samples or runs beams; PyTorch's is greedy)\n";
  }
  out += fmt::format("  KL(PyTorch || ORT) per step: {}; tolerance {:.3g} ({})\n", q(r.kl_steps), r.kl_tolerance,
                     r.kl_tolerance_origin == "calibrated"
                         ? fmt::format("{}x PyTorch's own float32-vs-float64 KL, at most {:.3g}", kCorpusCalibrationFactor,
                                       r.calibration_max_kl)
                         : r.kl_tolerance_origin);
  out += fmt::format("  top-k store: each KL a lower bound; PyTorch's mass outside its top {} at most {:.3g}, which "
                     "can hide at most {:.3g} more\n", r.top_k, r.max_tail_mass, r.max_tail_bound);
  out += fmt::format("  a prompt's largest KL: {}\n", q(r.kl_prompt_max));
  out += fmt::format("  top token: {} of {} prompts agree at every step ({:.1f}%), {} of {} steps; rank of "
                     "PyTorch's token in ORT's logits: {}\n",
                     r.prompts_agreeing, n, n ? 100.0 * static_cast<double>(r.prompts_agreeing) / static_cast<double>(n) : 0.0,
                     r.steps_agreeing, r.steps_judged, q(r.rank));
  if (r.prompts_errored) out += fmt::format("  ORT failed on {} prompts\n", r.prompts_errored);
  size_t shown = 0;
  for (size_t i : r.worst) {
    if (shown++ == 5) break;
    const CorpusPrompt& p = r.prompts[i];
    const auto div = p.FirstDivergent();
    std::string text = p.index < static_cast<int64_t>(r.texts.size()) ? ShowControls(r.texts[p.index]) : "";
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    out += fmt::format("  worst: prompt {} {}: max KL {:.3g}, {}{}\n", p.index, text.empty() ? "" : "'" + text + "'",
                       p.MaxKl(), div ? fmt::format("first divergent token at step {}", *div)
                                  : p.FreeRunDepartsEarlier()
                                      ? fmt::format("the free run leaves PyTorch's tokens at step {}", *p.free_divergent)
                                      : "same top token throughout",
                       p.error.empty() ? "" : "; " + p.error);
  }
  return out;
}

}  // namespace parity
