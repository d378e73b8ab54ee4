// The rule of each output's verdict band in every report of a derived model
// (docs/quantized.md "Verdicts"): console, JSON and HTML.
#include <gtest/gtest.h>

#include "report/html/html.h"
#include "report/quant_report.h"
#include "report/report_test_util.h"

namespace parity {
namespace {

QuantReport OutputsOnly() {
  QuantReport q{.kind = "qdq", .rule = "the outputs' verdict bands only (no per-layer report)"};
  q.outputs.push_back({.output = "logits", .rule = "qdq_steps", .source = "logits", .scale = 0.02, .atol = 0.08,
                       .decide_by = "quantile", .quantile = 0.999,
                       .why = "4 quantization steps of scale 0.02 (its own DequantizeLinear)"});
  q.outputs.push_back({.output = "probs", .rule = "quantized_default",
                       .why = "no constant quantization scale reaches 'probs' (its value comes from Softmax)"});
  return q;
}

TEST(QuantReport, EveryWriterNamesTheRuleOfEachOutput) {
  const QuantReport q = OutputsOnly();
  const std::string text = FormatQuantTable(q);
  EXPECT_NE(text.find("output 'logits' judged by rule qdq_steps: 4 quantization steps of scale 0.02"),
            std::string::npos) << text;
  EXPECT_NE(text.find("output 'probs' judged by rule quantized_default"), std::string::npos) << text;

  const auto j = QuantReportToJson(q);
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["rule"], "qdq_steps");
  EXPECT_EQ(j["outputs"][0]["scale"], 0.02);
  EXPECT_EQ(j["outputs"][0]["quantile"], 0.999);
  EXPECT_TRUE(j["outputs"][1]["scale"].is_null());
  EXPECT_TRUE(j["outputs"][1]["source"].is_null());

  CheckReport r = testing_util::MakeSampleReport();
  r.quant = q;
  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("Verdict bands of a derived model"), std::string::npos);
  EXPECT_NE(html.find("<td>qdq_steps</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>quantized_default</td>"), std::string::npos);
}

}  // namespace
}  // namespace parity
