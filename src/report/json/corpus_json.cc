#include <fmt/format.h>

#include "core/build_info.h"
#include "report/corpus_report.h"
#include "report/json/json_helpers.h"
#include "report/junit/junit.h"
#include "report/report_writer.h"
#include "report/text_escape.h"

namespace parity {
namespace {

using json = nlohmann::json;

json QuantilesJson(const Quantiles& q) {
  return {{"median", JsonNumber(q.median)}, {"p95", JsonNumber(q.p95)}, {"max", JsonNumber(q.max)}};
}

json Optional(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json PromptJson(const CorpusResult& r, const CorpusPrompt& p, bool with_steps) {
  json j = {{"index", p.index},
            {"text", p.index < static_cast<int64_t>(r.texts.size()) ? json(r.texts[p.index]) : json(nullptr)},
            {"prompt_length", p.prompt_length},
            {"status", CorpusPromptPasses(p, r.kl_tolerance) ? "PASS" : "FAIL"},
            {"first_divergent_step", Optional(p.FirstDivergent())},
            {"max_kl", JsonNumber(p.MaxKl())},
            {"mean_kl", JsonNumber(p.MeanKl())},
            {"error", p.error.empty() ? json(nullptr) : json(p.error)}};
  if (r.genai) {
    j["free_running_steps"] = p.free_steps >= 0 ? json(p.free_steps) : json(nullptr);
    j["free_running_divergent_step"] = Optional(p.free_divergent);
  }
  if (!with_steps) return j;
  json steps = json::array();
  for (const CorpusStep& s : p.steps)
    steps.push_back({{"kl", JsonNumber(s.kl)}, {"kl_tail_bound", JsonNumber(s.kl_tail_bound)}, {"tail_mass", JsonNumber(s.tail_mass)}, {"agree", s.agree},
                     {"rank", s.rank}, {"ort_token", s.ort_token}});
  j["steps"] = std::move(steps);
  return j;
}

// What an ORT GenAI package ran under (genai_check.h).
json GenAiJson(const GenAiRun& g) {
  auto object = [](const std::string& text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() ? j : json::object();
  };
  return {{"package", g.package},
          {"genai_config", g.config_path},
          {"search", object(g.search_json)},
          {"session_options", object(g.session_options_json)},
          {"greedy", g.greedy},
          {"onnxruntime_genai_version", g.genai_version},
          {"onnxruntime_version", g.ort_version}};
}

}  // namespace

json CorpusResultToJson(const CorpusResult& r) {
  json by_step = json::array();
  for (size_t s = 0; s < r.kl_by_step.size(); ++s)
    by_step.push_back({{"step", s}, {"kl", QuantilesJson(r.kl_by_step[s])}, {"agreement", r.agreement_by_step[s]}});
  json worst = json::array(), rows = json::array();
  for (size_t i : r.worst) worst.push_back(PromptJson(r, r.prompts[i], false));
  const bool with_steps = r.prompts.size() <= kMaxCorpusStepRowsInJson;
  for (const CorpusPrompt& p : r.prompts) rows.push_back(PromptJson(r, p, with_steps));
  const size_t n = r.prompts.size();
  json corpus = {
      {"prompts", n},
      {"steps", r.steps},
      {"top_k", r.top_k},
      {"vocab", r.vocab},
      {"bytes_per_step", r.bytes_per_step},
      {"store_bytes", r.bytes_per_step * r.steps * static_cast<int64_t>(n)},
      {"kl_tolerance", r.kl_tolerance},
      {"kl_tolerance_origin", r.kl_tolerance_origin},
      {"calibration_max_kl", r.calibration_max_kl >= 0 ? JsonNumber(r.calibration_max_kl) : json(nullptr)},
      {"max_kl_tail_bound", JsonNumber(r.max_tail_bound)},
      {"max_tail_mass", JsonNumber(r.max_tail_mass)},
      {"kl", QuantilesJson(r.kl_steps)},
      {"prompt_max_kl", QuantilesJson(r.kl_prompt_max)},
      {"rank", QuantilesJson(r.rank)},
      {"prompts_agreeing", r.prompts_agreeing},
      {"share_agreeing", n ? static_cast<double>(r.prompts_agreeing) / static_cast<double>(n) : 0.0},
      {"steps_agreeing", r.steps_agreeing},
      {"steps_judged", r.steps_judged},
      {"prompts_failing", r.prompts_failing},
      {"prompts_errored", r.prompts_errored},
      {"prompts_free_running_departing", r.prompts_free_departing},
      {"by_step", by_step},
      {"worst", worst},
      {"rows", rows},
      {"ort_ms", r.ort_ms}};
  json out = {{"schema", kCorpusReportSchema},
              {"tool", {{"name", "parity"}, {"version", PARITY_VERSION}}},
              {"model", r.model_path},
              {"corpus_dir", r.corpus_dir},
              {"torch_model", r.torch_model},
              {"engine", r.engine},
              {"config", r.config},
              {"overall_status", r.pass ? "PASS" : "FAIL"},
              {"corpus", std::move(corpus)}};
  if (r.genai) out["genai"] = GenAiJson(*r.genai);
  return out;
}

std::string CorpusResultToJUnit(const CorpusResult& r) {
  const std::string suite = "parity.corpus." + JUnitModelName(r.model_path);
  std::string cases;
  for (const CorpusPrompt& p : r.prompts) {
    cases += fmt::format("<testcase classname=\"{}\" name=\"prompt {}\">", XmlEscape(suite), p.index);
    if (!CorpusPromptPasses(p, r.kl_tolerance)) {
      const auto div = p.FirstDivergent();
      const std::string why =
          !p.error.empty()           ? p.error
          : div                      ? fmt::format("top token differs from step {}", *div)
          : p.FreeRunDepartsEarlier() ? fmt::format("the runtime's free run leaves PyTorch's tokens at step {}",
                                                    *p.free_divergent)
                                     : fmt::format("max KL {:.3g} above {:.3g}", p.MaxKl(), r.kl_tolerance);
      cases += fmt::format("<failure message=\"{}\"/>", XmlEscape(why));
    }
    cases += "</testcase>\n";
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites><testsuite name=\"{}\" tests=\"{}\" "
                     "failures=\"{}\">\n{}</testsuite></testsuites>\n",
                     XmlEscape(suite), r.prompts.size(), r.prompts_failing, cases);
}

Status WriteCorpusReport(const CorpusResult& r, const std::filesystem::path& dir) {
  return WriteReportFiles(dir, ReportJsonText(CorpusResultToJson(r)), CorpusResultToHtml(r), CorpusResultToJUnit(r));
}

}  // namespace parity
