#include "report/console/check_console.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "report/report_test_util.h"

namespace parity {
namespace {

TEST(CheckConsole, SummaryLeadsWithTheVerdictAndListsFailures) {
  const std::string s = FormatCheckSummary(testing_util::MakeSampleReport(), ConsoleStyle{});
  // The deployed config and the ONNX Runtime release on the first line (issue 54).
  EXPECT_TRUE(s.starts_with("FAIL /models/resnet & co.onnx [all threads=1] onnxruntime 1.29.0\n")) << s;
  EXPECT_NE(s.find("numerics FAIL"), std::string::npos) << s;
  EXPECT_NE(s.find("robustness SKIPPED"), std::string::npos) << s;
  EXPECT_NE(s.find("failed tests (1):"), std::string::npos) << s;
  EXPECT_NE(s.find("3 NaN mismatches"), std::string::npos) << s;
  // The failing output is the first of the worst outputs.
  const size_t worst = s.find("worst outputs:\n");
  ASSERT_NE(worst, std::string::npos);
  EXPECT_EQ(s.compare(worst + 15, 19, "  fail anomaly_nan/"), 0) << s.substr(worst);
  EXPECT_NE(s.find("latency [all threads=1]: mean 2.750 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("NOT deterministic"), std::string::npos) << s;
  EXPECT_EQ(s.find('\x1b'), std::string::npos);  // no colour unless asked
}

// A latency that took the check's own runs of the sample says how many (issue 55).
TEST(CheckConsole, ALatencyLineSaysHowManyOfItsRunsWereTheChecksOwn) {
  CheckReport r = testing_util::MakeSampleReport();
  r.performance.back().latency.runs = 3;
  r.performance.back().latency.reused_runs = 2;
  const std::string s = FormatCheckSummary(r, ConsoleStyle{});
  EXPECT_NE(s.find("(3 runs, 2 the check's own); session"), std::string::npos) << s;
  EXPECT_NE(s.find("(50 runs); session"), std::string::npos) << s;  // the other config took none
}

// Issue 54: a PASS prints the tolerance once (its worst output's), not a line per output.
TEST(CheckConsole, APassingSummaryStatesTheToleranceOnce) {
  CheckReport r = testing_util::MakeSampleReport();
  r.overall = Verdict::kPass;
  r.stages[2].findings.pop_back();
  r.stages[2].status = Verdict::kPass;
  for (auto& sample : r.samples) {
    sample.status = Verdict::kPass;
    for (auto& o : sample.outputs) {
      o.comparison = testing_util::SampleComparison(o.output, Verdict::kPass);
      o.comparison.tolerance.rules_fired = {"default for float32", "scaled: atol = 0.0001 x rms(ref) 1 = 0.0001"};
    }
  }
  const std::string s = FormatCheckSummary(r, ConsoleStyle{});
  size_t lines = 0;
  for (size_t at = s.find("tolerance: "); at != std::string::npos; at = s.find("tolerance: ", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << s;
  EXPECT_TRUE(s.starts_with("PASS /models/resnet & co.onnx [all threads=1] onnxruntime 1.29.0\n")) << s;
}

TEST(CheckConsole, ColourOnlyWhenAsked) {
  ConsoleStyle style;
  style.color = true;
  EXPECT_NE(FormatCheckSummary(testing_util::MakeSampleReport(), style).find("\x1b[31;1mFAIL"),
            std::string::npos);
}

TEST(ProgressBar, FormatsAndClamps) {
  EXPECT_EQ(FormatProgressBar(5, 10, "numerics", 10), "[#####     ] 5/10 numerics");
  EXPECT_EQ(FormatProgressBar(12, 10, "x", 4), "[####] 10/10 x");
  EXPECT_EQ(FormatProgressBar(0, 0, "", 2), "[##] 0/0 ");
}

TEST(ProgressBar, DrawsInPlaceAndClearsWhenEnabled) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar(4, f, true);
    bar.Update(1, "syntax");
    bar.Step("signature");
  }
  std::rewind(f);
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string text(buf, n);
  EXPECT_TRUE(text.starts_with("\r[")) << text;
  EXPECT_NE(text.find("1/4 syntax"), std::string::npos);
  EXPECT_NE(text.find("2/4 signature"), std::string::npos);
  EXPECT_TRUE(text.ends_with("\r")) << text;  // erased by Finish
}

TEST(ProgressBar, SilentWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar(3, f);  // a file is not a terminal
    EXPECT_FALSE(bar.enabled());
    bar.Step("a");
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace parity
