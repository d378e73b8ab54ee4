// The generation section in each format: the JSON keys the schema promises,
// the console's failing steps, the SVG plot's lines and the departure mark.
#include <gtest/gtest.h>

#include "report/generation_report.h"

namespace parity {
namespace {

GenerationResult TwoSteps(bool depart) {
  GenerationResult g{.length = 2, .prompt_length = 3, .batch = 1};
  for (int64_t k = 0; k < 2; ++k) {
    GenerationStep s{.step = k, .kind = k == 0 ? "prefill" : "decode", .torch_tokens = {7}, .ort_tokens = {7}};
    s.tokens_agree = true;
    s.judged = true;
    s.logits = Verdict::kPass;
    s.logits_max_abs = 1e-7 * (k + 1);
    s.logits_band = 1e-6;
    s.logits_score = 0.1 * (k + 1);
    g.steps.push_back(s);
  }
  if (depart) {
    g.steps[1].ort_tokens = {8};
    g.steps[1].tokens_agree = false;
    g.first_differing_step = 1;
  }
  g.tokens_agreeing = depart ? 1 : 2;
  g.error_growth = 2;
  g.verdict = depart ? Verdict::kFail : Verdict::kPass;
  g.checks.push_back({"present_starts_with_past", Verdict::kPass, "ok"});
  return g;
}

TEST(GenerationReport, JsonHasEveryStepAndTheFirstDifferingStep) {
  auto j = GenerationToJson(TwoSteps(true));
  EXPECT_EQ(j["status"], "FAIL");
  EXPECT_EQ(j["tokens_agreeing"], 1);
  EXPECT_EQ(j["first_differing_step"], 1);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][1]["ort_tokens"][0], 8);
  EXPECT_EQ(j["steps"][0]["logits"]["status"], "pass");
  EXPECT_TRUE(GenerationToJson(TwoSteps(false))["first_differing_step"].is_null());
}

TEST(GenerationReport, ConsoleListsOnlyTheFailingSteps) {
  const std::string pass = FormatGeneration(TwoSteps(false), 10);
  EXPECT_NE(pass.find("generation: PASS 2/2 tokens agree"), std::string::npos) << pass;
  EXPECT_EQ(pass.find("step 1:"), std::string::npos) << pass;
  const std::string fail = FormatGeneration(TwoSteps(true), 10);
  EXPECT_NE(fail.find("(first differs at step 1)"), std::string::npos) << fail;
  EXPECT_NE(fail.find("step 1: tokens PyTorch 7 ORT 8"), std::string::npos) << fail;
}

TEST(GenerationReport, SvgPlotsTheErrorTheBandAndTheDeparture) {
  const std::string svg = GenerationSvg(TwoSteps(true));
  EXPECT_NE(svg.find("<polyline class=\"error\""), std::string::npos);
  EXPECT_NE(svg.find("<polyline class=\"band\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"departs\""), std::string::npos);
  EXPECT_EQ(GenerationSvg(TwoSteps(false)).find("class=\"departs\""), std::string::npos);
  EXPECT_NE(GenerationHtmlSection(TwoSteps(false)).find("id=\"generation\""), std::string::npos);
}

// Prompts (one generation dump each): none is nothing in every format; a
// failing prompt is listed with where it departs, a hostile dump path escaped.
TEST(GenerationReport, PromptsAreListedFailingFirstAndEscaped) {
  EXPECT_EQ(GenerationPromptsToJson({}), nlohmann::json::array());
  EXPECT_EQ(FormatGenerationPrompts({}, 5), "");
  EXPECT_EQ(GenerationPromptsHtml({}), "");
  std::vector<GenerationPrompt> prompts = {
      {.dump = "d0", .prompt_length = 6, .length = 16, .tokens_agreeing = 16, .verdict = Verdict::kPass},
      {.dump = "<d1>", .prompt_length = 6, .length = 16, .tokens_agreeing = 9, .first_differing_step = 9,
       .worst_logits_score = 3, .verdict = Verdict::kFail}};
  const auto j = GenerationPromptsToJson(prompts);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["first_differing_step"], 9);
  EXPECT_TRUE(j[0]["first_differing_step"].is_null());
  EXPECT_EQ(j[1]["status"], "FAIL");
  const std::string text = FormatGenerationPrompts(prompts, 5);
  EXPECT_NE(text.find("prompts: 1 of 2 pass"), std::string::npos) << text;
  EXPECT_NE(text.find("<d1>: 9/16 tokens agree, first differs at step 9"), std::string::npos) << text;
  EXPECT_EQ(text.find("d0:"), std::string::npos) << "only failing prompts are listed";
  const std::string html = GenerationPromptsHtml(prompts);
  EXPECT_NE(html.find("&lt;d1&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<d1>"), std::string::npos);
}

}  // namespace
}  // namespace parity
