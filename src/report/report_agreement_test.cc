// Issue 28: the four formats of one check report agree with themselves and
// each other: "failed tests" are the failures and nothing else, expected
// refusals have a section of their own, and every format says first what the
// model was judged against.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/console/check_console.h"
#include "report/json/check_json.h"
#include "report/check_summary.h"
#include "report/html/html.h"
#include "report/junit/junit.h"

namespace parity {
namespace {

// A passing report with a generated boundary sample ORT refused (SKIPPED, an
// expected refusal) and an anomaly that raises under both configs (PASS).
CheckReport PassingReportWithRefusals() {
  CheckReport r;
  r.overall = Verdict::kPass;
  r.model = CheckedModel{.path = "m.onnx"};
  r.config = CheckConfig{};
  StageResult numerics{.name = "numerics", .status = Verdict::kPass};
  numerics.findings.push_back({"numerics.typical.y", Verdict::kPass, "max_abs 0"});
  numerics.findings.push_back({"numerics.boundary_1x1", Verdict::kUnchecked, "the model refuses this sample"});
  r.stages.push_back(numerics);
  SampleResult typical{.name = "typical", .kind = "typical"};
  SampleResult refused{.name = "boundary_1x1", .kind = "boundary", .status = Verdict::kUnchecked,
                       .error = "Invalid input shape"};
  SampleResult raised{.name = "anomaly_nan", .kind = "anomaly", .status = Verdict::kPass,
                      .error = "NaN input", .behaviour = "raised"};
  r.samples = {typical, refused, raised};
  return r;
}

TEST(ReportAgreement, APassingReportListsNoFailedTestInAnyFormat) {
  const CheckReport r = PassingReportWithRefusals();
  ASSERT_TRUE(r.FailedTests().empty());
  ASSERT_EQ(r.ExpectedRefusals().size(), 2u);

  const std::string console = FormatCheckSummary(r, ConsoleStyle{});
  EXPECT_EQ(console.find("failed tests"), std::string::npos) << console;
  EXPECT_EQ(console.find("raised"), console.find("raised anomaly")) << console;
  EXPECT_NE(console.find("expected refusals (2, not failures):"), std::string::npos) << console;

  const nlohmann::json j = CheckReportToJson(r);
  EXPECT_TRUE(j["failed_tests"].empty());
  ASSERT_EQ(j["expected_refusals"].size(), 2u);
  EXPECT_EQ(j["expected_refusals"][0]["sample"], "boundary_1x1");

  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("0 failed tests"), std::string::npos);
  EXPECT_NE(html.find("No failed tests."), std::string::npos);
  EXPECT_EQ(html.find("class=\"failed-list\""), std::string::npos);
  EXPECT_EQ(html.find("<tr class=\"raised\">"), std::string::npos);
  EXPECT_NE(html.find("Expected refusals (2, not failures)"), std::string::npos);

  const std::string junit = CheckReportToJUnit(r);
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<failure"), std::string::npos) << junit;
}

TEST(ReportAgreement, FailedTestCountsMatchTheirRows) {
  CheckReport r = PassingReportWithRefusals();
  r.overall = Verdict::kFail;
  r.stages[0].findings.push_back({"numerics.typical.z", Verdict::kFail, "max_abs 1"});
  r.stages[0].findings.push_back({"numerics.typical.w", Verdict::kFail, "max_abs 2"});
  r.samples.push_back({.name = "user0", .kind = "user", .status = Verdict::kFail, .error = "ORT raised"});
  r.stages[0].findings.push_back({"numerics.user0", Verdict::kFail, "ORT raised"});
  const size_t failed = r.FailedTests().size();
  ASSERT_EQ(failed, 3u);
  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("3 failed tests"), std::string::npos);
  const std::string list = html.substr(html.find("class=\"failed-list\""));
  const std::string rows = list.substr(0, list.find("</table>"));
  size_t count = 0;
  for (size_t at = rows.find("<tr><td class=\"id"); at != std::string::npos; at = rows.find("<tr><td class=\"id", at + 1))
    ++count;
  EXPECT_EQ(count, failed);
  EXPECT_EQ(CheckReportToJson(r)["failed_tests"].size(), failed);
  const std::string console = FormatCheckSummary(r, ConsoleStyle{});
  EXPECT_NE(console.find("failed tests (3):"), std::string::npos) << console;
  // JUnit's failure count is the same list (issue 54: the failed sample was a second failure).
  const std::string junit = CheckReportToJUnit(r);
  EXPECT_NE(junit.find("failures=\"3\" errors=\"0\""), std::string::npos) << junit.substr(0, 400);
  size_t failures = 0;
  for (size_t at = junit.find("<failure "); at != std::string::npos; at = junit.find("<failure ", at + 1)) ++failures;
  EXPECT_EQ(failures, failed);
}

// Issue 54: one planted fault gave 8 failed tests with the root cause 7th.
// Every format lists the culprit first, then what explains it, then where it
// shows, then the outputs it broke.
TEST(ReportAgreement, EveryFormatListsTheCulpritFirst) {
  CheckReport r = PassingReportWithRefusals();
  r.overall = Verdict::kFail;
  auto& findings = r.stages[0].findings;
  findings.push_back({"numerics.typical.y", Verdict::kFail, "max_abs 1 (the symptom)"});
  findings.push_back({"numerics.reference_model.tensors", Verdict::kFail, "19 of 65 tensors depart"});
  findings.push_back({"numerics.locate.first_divergence", Verdict::kFail, "first divergence at t"});
  findings.push_back({"numerics.locate.model_difference", Verdict::kFail, "the models first differ at c"});
  findings.push_back({"numerics.locate.top_culprit", Verdict::kFail, "top culprit: /layer3/conv"});
  const std::vector<std::string> expected = {"numerics.locate.top_culprit", "numerics.locate.model_difference",
                                             "numerics.reference_model.tensors", "numerics.locate.first_divergence",
                                             "numerics.typical.y"};
  const auto in_order = [&](const std::string& text) {
    size_t at = 0;
    for (const auto& id : expected) {
      at = text.find(id, at);
      if (at == std::string::npos) return false;
    }
    return true;
  };
  const nlohmann::json j = CheckReportToJson(r);
  ASSERT_EQ(j["failed_tests"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(j["failed_tests"][i]["id"], expected[i]);
  const std::string console = FormatCheckSummary(r, ConsoleStyle{});
  EXPECT_TRUE(in_order(console.substr(console.find("failed tests")))) << console;
  std::string html = CheckReportToHtml(r);
  for (size_t at; (at = html.find("<wbr>")) != std::string::npos;) html.erase(at, 5);  // long ids' break points
  EXPECT_TRUE(in_order(html.substr(html.find("class=\"failed-list\"")))) << html;
  EXPECT_TRUE(in_order(CheckReportToJUnit(r))) << CheckReportToJUnit(r);
}

TEST(ReportAgreement, EveryFormatSaysWhatItWasJudgedAgainstFirst) {
  CheckReport r = PassingReportWithRefusals();
  r.notes.push_back("d/: the dump was made with an export of sha256 abc..., judging a model changed since the export");
  const std::string plain = JudgedAgainst(r);
  EXPECT_NE(plain.find("the same model under [disable] only; PyTorch was not consulted"), std::string::npos)
      << plain;
  const std::string console = FormatCheckSummary(r, ConsoleStyle{});
  const size_t second_line = console.find('\n') + 1;
  EXPECT_EQ(console.compare(second_line, plain.size(), plain), 0) << console;
  EXPECT_NE(console.find("note: d/: the dump was made"), std::string::npos) << console;
  EXPECT_EQ(CheckReportToJson(r)["judged_against"]["kind"], "config");
  const std::string html = CheckReportToHtml(r);
  EXPECT_LT(html.find("PyTorch was not consulted"), html.find("id=\"failed\""));
  EXPECT_NE(html.find("changed since the export"), std::string::npos);
  const std::string junit = CheckReportToJUnit(r);
  EXPECT_LT(junit.find("PyTorch was not consulted"), junit.find("<testsuites"));

  r.model->reference_model = "orig.onnx";
  EXPECT_NE(JudgedAgainst(r).find("the reference model orig.onnx under [disable] only; PyTorch was not consulted"),
            std::string::npos);
  EXPECT_EQ(CheckReportToJson(r)["judged_against"]["kind"], "reference_model");

  r.config->torch = "dump/";
  r.samples.push_back({.name = "torch"});
  r.samples.push_back({.name = "torch:width32"});
  EXPECT_NE(JudgedAgainst(r).find("judged against: the PyTorch dump dump/ (2 samples)"), std::string::npos)
      << JudgedAgainst(r);
  EXPECT_EQ(JudgedAgainst(r).find("not consulted"), std::string::npos);
}

}  // namespace
}  // namespace parity
