// report.html of a corpus check: the page template, stylesheet, script and
// uPlot of check's report (report/assets, embedded), with the corpus's
// sections and two charts (report.js: corpus_steps, corpus_prompts).
#include <fmt/format.h>

#include <cmath>

#include "core/build_info.h"
#include "report/corpus_report.h"
#include "report/html/html_internal.h"
#include "report/json/json_helpers.h"

namespace parity {
namespace {

using html::Esc;
using html::Num;
using json = nlohmann::json;

std::string Text(const CorpusResult& r, int64_t index) {
  return index < static_cast<int64_t>(r.texts.size()) ? r.texts[index] : std::string();
}

std::string SummaryTable(const CorpusResult& r) {
  const size_t n = r.prompts.size();
  auto q = [](const Quantiles& x) { return fmt::format("{} / {} / {}", Num(x.median), Num(x.p95), Num(x.max)); };
  return fmt::format(
      "<section id=\"corpus-summary\"><h2>Corpus</h2><table>"
      "<tr><th>prompts &times; steps</th><td>{} &times; {} (teacher-forced: PyTorch's tokens fed to both)</td></tr>"
      "<tr><th>store</th><td>top-{} of {} logits + log-sum-exp: {} bytes a step, {} in all</td></tr>"
      "<tr><th>KL(PyTorch &#8741; ORT) per step, median / p95 / max</th><td>{}</td></tr>"
      "<tr><th>a prompt's largest KL, median / p95 / max</th><td>{} (tolerance {}, {})</td></tr>"
      "<tr><th>top-k truncation</th><td>each KL is a lower bound; PyTorch's mass outside its top-k is at most {} "
      "and the true KL at most {} above it</td></tr>"
      "<tr><th>prompts whose top token agrees at every step</th><td>{} of {} ({:.1f}%)</td></tr>"
      "<tr><th>steps whose top token agrees</th><td>{} of {}</td></tr>"
      "<tr><th>rank of PyTorch's token in ORT's logits, median / p95 / max</th><td>{}</td></tr>"
      "<tr><th>prompts failing / ORT errors</th><td>{} / {}</td></tr></table></section>\n",
      n, r.steps, r.top_k, r.vocab, r.bytes_per_step, r.bytes_per_step * r.steps * static_cast<int64_t>(n),
      q(r.kl_steps), q(r.kl_prompt_max), Num(r.kl_tolerance), Esc(r.kl_tolerance_origin), Num(r.max_tail_mass),
      Num(r.max_tail_bound), r.prompts_agreeing, n,
      n ? 100.0 * static_cast<double>(r.prompts_agreeing) / static_cast<double>(n) : 0.0, r.steps_agreeing,
      r.steps_judged, q(r.rank), r.prompts_failing, r.prompts_errored);
}

std::string WorstTable(const CorpusResult& r) {
  std::string rows;
  for (size_t i : r.worst) {
    const CorpusPrompt& p = r.prompts[i];
    const auto div = p.FirstDivergent();
    const bool pass = CorpusPromptPasses(p, r.kl_tolerance);
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        p.index, html::Pill(pass ? "PASS" : "FAIL"), html::Breakable(Text(r, p.index)),
                        div ? std::to_string(*div) : "&ndash;", Num(p.MaxKl()), Num(p.MeanKl()), Esc(p.error));
  }
  return "<section id=\"corpus-worst\"><h2>The worst prompts</h2><table><tr><th>prompt</th><th>status</th>"
         "<th>text</th><th>first divergent step</th><th>max KL</th><th>mean KL</th><th>error</th></tr>" +
         rows + "</table></section>\n";
}

std::string Charts() {
  return "<section id=\"corpus-charts\"><h2>KL and agreement per step</h2>"
         "<p>Over prompts, per step index: KL(PyTorch &#8741; ORT) median, p95 and max (log scale; 0 is drawn at "
         "1e-18) and the share of prompts whose top token agrees.</p>"
         "<div class=\"chart\" data-chart=\"corpus_steps\"></div>"
         "<h2>KL and agreement per prompt</h2><p>Per prompt: its largest and mean KL, and the share of its steps "
         "whose top token agrees.</p><div class=\"chart\" data-chart=\"corpus_prompts\"></div></section>\n";
}

json ChartData(const CorpusResult& r) {
  json steps = {{"kl_median", json::array()}, {"kl_p95", json::array()}, {"kl_max", json::array()},
                {"agreement", json::array()}};
  for (size_t s = 0; s < r.kl_by_step.size(); ++s) {
    steps["kl_median"].push_back(JsonNumber(r.kl_by_step[s].median));
    steps["kl_p95"].push_back(JsonNumber(r.kl_by_step[s].p95));
    steps["kl_max"].push_back(JsonNumber(r.kl_by_step[s].max));
    steps["agreement"].push_back(r.agreement_by_step[s]);
  }
  json prompts = {{"index", json::array()}, {"kl_max", json::array()}, {"kl_mean", json::array()},
                  {"agreement", json::array()}};
  for (const CorpusPrompt& p : r.prompts) {
    int64_t agree = 0;
    for (const CorpusStep& s : p.steps) agree += s.agree;
    prompts["index"].push_back(p.index);
    prompts["kl_max"].push_back(JsonNumber(p.MaxKl()));
    prompts["kl_mean"].push_back(JsonNumber(p.MeanKl()));
    prompts["agreement"].push_back(p.steps.empty() ? 0.0 : static_cast<double>(agree) / static_cast<double>(p.steps.size()));
  }
  return {{"corpus_steps", steps}, {"corpus_prompts", prompts}};
}

}  // namespace

std::string CorpusResultToHtml(const CorpusResult& r) {
  const std::string verdict = r.pass ? "PASS" : "FAIL";
  std::string body = fmt::format(
      "<main>\n<h1 class=\"{0}\">{0} &middot; {1} prompts</h1><p>{2} against PyTorch ({3}, corpus {4}), ORT [{5}], "
      "{6} engine</p>\n",
      verdict, r.prompts.size(), Esc(r.model_path), Esc(r.torch_model), Esc(r.corpus_dir), Esc(r.config), Esc(r.engine));
  if (r.genai)
    body += fmt::format("<p id=\"genai\">ORT GenAI package, run by the runtime's own loop under <code>{}</code>: "
                        "search <code>{}</code>; session options <code>{}</code>; onnxruntime-genai {}, "
                        "onnxruntime {}; free-running: {}</p>\n",
                        Esc(r.genai->config_path), Esc(r.genai->search_json), Esc(r.genai->session_options_json),
                        Esc(r.genai->genai_version),
                        Esc(r.genai->ort_version),
                        r.genai->greedy ? fmt::format("{} of {} prompts leave PyTorch's tokens before teacher forcing "
                                                      "does", r.prompts_free_departing, r.prompts.size())
                                        : std::string("not judged (the search is not greedy)"));
  body += SummaryTable(r) + Charts() + WorstTable(r);
  body += fmt::format("<footer>Written by parity {}. Charts: uPlot (MIT), embedded.</footer>\n</main>", PARITY_VERSION);
  return html::ReportPage(verdict + " \xC2\xB7 parity check --corpus \xC2\xB7 " + r.model_path, body, ChartData(r));
}

}  // namespace parity
