#include <gtest/gtest.h>

#include <limits>

#include "report/dataset_report.h"

namespace parity {
namespace {

DatasetReport SmallReport() {
  DatasetReport r{.model = "m<1>.onnx", .reference = "onnx:disable", .source = "data", .count = 2,
                  .outputs = {"logits", "<script>boxes"}};
  for (const char* id : {"a", "b"})
    r.rows.push_back({.id = id,
                      .cells = {DatasetCell{.max_abs = 0.5, .score = 3, .passed = false, .top1_rows = 1,
                                            .top1_agree = id[0] == 'a' ? 0 : 1},
                                DatasetCell{.max_abs = 0, .score = 0}}});
  DatasetOutputSummary logits{.name = "logits", .failed = 2, .histogram = std::vector<int64_t>(kDatasetHistogramBins),
                              .classifier = true, .top1_rows = 2, .top1_agree = 1, .flipped = {"a"}};
  logits.histogram[9] = 2;
  DatasetOutputSummary boxes{.name = "<script>boxes", .histogram = std::vector<int64_t>(kDatasetHistogramBins)};
  boxes.histogram[0] = 2;
  r.summaries = {logits, boxes};
  r.located = {{.id = "a", .worst = true, .flipped = true,
                .first = FirstDivergence{.tensor = "t", .producer = "conv", .fused_node = "conv", .op_type = "Conv",
                                         .covers = {"conv"}}}};
  r.ranking = {{.fused_node = "conv", .op_type = "Conv", .covers = {"conv"}, .samples = 1, .flips = 1, .ids = {"a"}}};
  r.overall = Verdict::kFail;
  return r;
}

TEST(DatasetReport, JsonHasTheDistributionAgreementAndRanking) {
  const nlohmann::json j = DatasetReportToJson(SmallReport());
  EXPECT_EQ(j["schema"], "parity.dataset/1");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["outputs"][0]["top1_agreement"], 0.5);
  EXPECT_EQ(j["outputs"][0]["flipped"], nlohmann::json::array({"a"}));
  EXPECT_TRUE(j["outputs"][1]["top1_agreement"].is_null());  // not classifier-like
  EXPECT_EQ(j["headline"], "1 of 1 located flips first diverge at Conv 'conv'");
  EXPECT_EQ(j["samples"][0]["outputs"]["logits"]["flipped"], true);
  EXPECT_FALSE(j["samples"][1]["outputs"]["<script>boxes"].contains("flipped"));
}

TEST(DatasetReport, ModuleRankingAndRetriesAreInJsonConsoleAndHtml) {
  DatasetReport r = SmallReport();
  EXPECT_TRUE(DatasetReportToJson(r)["module_headline"].is_null());
  EXPECT_EQ(DatasetReportToJson(r)["retried"]["samples"], 0);
  r.located[0].module = "features.4";
  r.module_ranking = {{.module = "features.4", .samples = 1, .flips = 1, .ids = {"a"}}};
  r.retried = 3;
  r.retried_entries = 1;
  const nlohmann::json j = DatasetReportToJson(r);
  EXPECT_EQ(j["module_headline"], "1 of 1 located flips first diverge in module features.4");
  EXPECT_EQ(j["module_ranking"][0]["module"], "features.4");
  EXPECT_EQ(j["locate"]["samples"][0]["module"], "features.4");
  EXPECT_EQ(j["retried"]["samples"], 3);
  EXPECT_NE(FormatDatasetSummary(r).find("first diverge in module features.4"), std::string::npos);
  r.model = "m.onnx";
  r.env.ort_version = "1.29.0";
  EXPECT_TRUE(FormatDatasetSummary(r).starts_with("FAIL: m.onnx [" + r.target.Label() + "] onnxruntime 1.29.0: "))
      << FormatDatasetSummary(r);
  EXPECT_NE(DatasetReportToHtml(r).find("by PyTorch module"), std::string::npos);
  // Issue 54: JUnit's failure message says where, the module first; names carry the model.
  r.model = "models/resnet18.onnx";
  const std::string junit = DatasetReportToJUnit(r);
  EXPECT_NE(junit.find("out of tolerance; max_abs max"), std::string::npos) << junit;
  EXPECT_NE(junit.find("flipped; 1 of 1 located flips first diverge in module features.4\""), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("classname=\"parity.resnet18.dataset\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<testsuite name=\"resnet18/dataset\""), std::string::npos) << junit;
}

TEST(DatasetReport, HtmlEscapesNamesAndJUnitHasOneCasePerOutput) {
  const DatasetReport r = SmallReport();
  const std::string html = DatasetReportToHtml(r);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;boxes"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"histogram\""), std::string::npos);
  const std::string junit = DatasetReportToJUnit(r);
  EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"logits\" time=\"0\">"), std::string::npos);  // the failing one has a body
  EXPECT_NE(junit.find("name=\"&lt;script&gt;boxes\" time=\"0\"/>"), std::string::npos);
}

}  // namespace
}  // namespace parity
