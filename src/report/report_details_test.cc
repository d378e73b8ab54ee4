// Report details of issue 15, one test each: numbers at 4 significant
// digits in the suspect fused nodes, one histogram per output, unchecked
// tensors kept apart from exact matches, layer_curve's op_type an op type,
// cosine never printed as 1 on a failing row, the tolerance and its reason
// printed, and a tolerance warning shown once per output.
#include <gtest/gtest.h>

#include <regex>

#include "report/console/check_console.h"
#include "report/json/check_json.h"
#include "report/console/console_table.h"
#include "report/html/html.h"
#include "report/html/html_internal.h"
#include "report/report_test_util.h"
#include "report/console/torch_console.h"

namespace parity {
namespace {

using testing_util::MakeSampleReport;

TEST(ReportDetails, SuspectFusedNodesShowShortNumbers) {
  CheckReport r = MakeSampleReport();
  LocateCulprit& c = r.locate->culprits[0];
  c.local.score = 4321.123456789012;
  c.local.max_abs = 0.123456789012345;
  c.ablation = LocateAblation{.optimizer = "ConvActivationFusion",
                              .local_without = {.tensor = "t", .max_abs = 1.0000000000000002e-7, .score = 0.00123456789},
                              .latency_ms_with = 1.234567890123,
                              .latency_ms_without = 2.345678901234};
  const std::string html = CheckReportToHtml(r);
  EXPECT_EQ(html.find("4321.123456789012"), std::string::npos);
  EXPECT_EQ(html.find("0.123456789012345"), std::string::npos);
  EXPECT_EQ(html.find("1.234567890123"), std::string::npos);
  EXPECT_NE(html.find("4321"), std::string::npos);
  EXPECT_NE(html.find("0.1235"), std::string::npos);
}

TEST(ReportDetails, OneHistogramPerOutputFromItsWorstSample) {
  CheckReport r = MakeSampleReport();
  // Three more samples of `logits`, one of them with the largest error.
  for (int k = 0; k < 3; ++k) {
    SampleResult s = r.samples[0];
    s.name = "boundary_" + std::to_string(k);
    s.outputs[0].comparison.metrics.max_abs = k == 1 ? 1e-3 : 1e-6;
    r.samples.push_back(s);
  }
  const auto picks = html::HistogramOutputs(r, 24);
  ASSERT_EQ(picks.size(), 2u);  // logits and the failing odd-named output
  const OutputResult& first = r.samples[picks[0].first].outputs[picks[0].second];
  EXPECT_EQ(first.comparison.status, Verdict::kFail);  // failing first
  EXPECT_EQ(r.samples[picks[1].first].name, "boundary_1");  // logits' worst sample
}

TEST(ReportDetails, UncheckedTensorsAreNotDrawnAsExactMatches) {
  CheckReport r = MakeSampleReport();
  r.layer_curve[7].status = Verdict::kUnchecked;
  r.layer_curve[7].error_ratio = 0;
  const std::string html = CheckReportToHtml(r);
  // The page says so, and the script keeps unchecked points off the line.
  EXPECT_NE(html.find("unchecked: nothing to compare"), std::string::npos);
  EXPECT_NE(html.find("unchecked (fused away)"), std::string::npos);
  EXPECT_NE(html.find("ratio.push(skip ? null : r)"), std::string::npos);
}

TEST(ReportDetails, LayerCurveOpTypeIsAnOpTypeAndProducerIsTheNode) {
  CheckReport r = MakeSampleReport();
  r.layer_curve[0].producer = "/layer0/Conv";
  const auto j = CheckReportToJson(r);
  EXPECT_EQ(j["layer_curve"][0]["producer"], "/layer0/Conv");
  EXPECT_EQ(j["layer_curve"][0]["op_type"], "Conv");
  EXPECT_TRUE(j.contains("notes"));
}

// Issue 28: an all-NaN output has no finite pair; its cosine is no "1".
TEST(ReportDetails, AnAllNanOutputPrintsNoCosine) {
  TensorMetrics m;
  m.count = 10;
  m.finite_pairs = 0;
  m.nan_ref = m.nan_test = m.nan_equal = 10;
  m.cosine = 1;
  EXPECT_EQ(CosineText(m), "n/a (no finite pairs)");
  m.finite_pairs = 10;
  EXPECT_EQ(CosineText(m), "1.000000");
  CheckReport r = MakeSampleReport();
  auto& c = r.samples[0].outputs[0].comparison;
  c.metrics.finite_pairs = 0;
  const std::string console = FormatCheckSummary(r, ConsoleStyle{});
  EXPECT_NE(console.find("cosine n/a (no finite pairs)"), std::string::npos) << console;
  EXPECT_NE(CheckReportToHtml(r).find("n/a (no finite pairs)"), std::string::npos);
}

TEST(ReportDetails, CosineNeverReadsOneWhenItIsNot) {
  EXPECT_EQ(CosineText(1.0), "1.000000");
  EXPECT_EQ(CosineText(0.93), "0.930000");
  EXPECT_EQ(CosineText(1 - 3e-9), "1-3.0e-09");
  EXPECT_EQ(CosineText(1 + 2.2e-16), "1+2.2e-16");  // rounding above 1 (issue 28 saw "1--2.2e-16")
  CheckReport r = MakeSampleReport();
  r.samples[1].outputs[1].comparison.metrics.cosine = 1 - 2e-10;
  ConsoleStyle style;
  const std::string text = FormatCheckSummary(r, style);
  EXPECT_NE(text.find("cosine 1-2.0e-10"), std::string::npos) << text;
  EXPECT_NE(CheckReportToHtml(r).find("1-2.0e-10"), std::string::npos);
}

TEST(ReportDetails, ConsoleSaysWhichToleranceAndWhyAndWarnsOncePerOutput) {
  CheckReport r = MakeSampleReport();
  for (auto& s : r.samples)
    for (auto& o : s.outputs) {
      o.comparison.tolerance.rules_fired = {"default for float32", "scaled: atol = 0.0001 x rms(ref) 2e-09 = 2e-13"};
      o.comparison.tolerance.warnings = {"atol 0.0001 is at least the reference's largest magnitude 2e-09"};
    }
  ConsoleStyle style;
  const std::string text = FormatCheckSummary(r, style);
  EXPECT_NE(text.find("tolerance: scaled: atol = 0.0001 x rms(ref)"), std::string::npos) << text;
  // `logits` appears in two samples: one warning for it.
  size_t n = 0;
  for (size_t at = text.find("warning: logits:"); at != std::string::npos; at = text.find("warning: logits:", at + 1))
    ++n;
  EXPECT_EQ(n, 1u) << text;
  // The HTML table says it too: the mode, the reason on hover, the warning.
  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("title=\"scaled: atol = 0.0001 x rms(ref) 2e-09 = 2e-13\""), std::string::npos);
  EXPECT_NE(html.find("<b>warning:</b> atol 0.0001 is at least"), std::string::npos);
}

// Issue 54: `align` listed "eval BatchNorm folded into the Conv node '...'
// before it" once per BatchNorm; a reason shared by 3 or more layers is one line.
TEST(ReportDetails, AlignGroupsARepeatedReasonIntoOneLine) {
  TorchComparison c;
  for (int i = 0; i < 20; ++i) {
    LayerVerdict v;
    v.alignment.module = "layer" + std::to_string(i) + ".bn";
    v.alignment.reason = "eval BatchNorm folded into the Conv node '/layer" + std::to_string(i) +
                         "/Conv' before it, so this module's output has no tensor";
    c.layers.push_back(v);
  }
  LayerVerdict odd;
  odd.alignment.module = "head";
  odd.alignment.reason = "no ONNX tensor holds this value";
  c.layers.push_back(odd);
  const std::string table = FormatAlignTable(c, false);
  size_t folded = 0;
  for (size_t at = table.find("folded"); at != std::string::npos; at = table.find("folded", at + 1)) ++folded;
  EXPECT_EQ(folded, 1u) << table;
  EXPECT_NE(table.find("20 layers unchecked: eval BatchNorm folded into the Conv node before it, so this module's "
                       "output has no tensor: layer0.bn, layer1.bn"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(", ... 12 more\n"), std::string::npos) << table;
  EXPECT_NE(table.find("no ONNX tensor holds this value"), std::string::npos) << table;  // alone: its own row
}

}  // namespace
}  // namespace parity
