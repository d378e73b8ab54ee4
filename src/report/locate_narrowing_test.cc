// A narrowed culprit (engine/locate/drilldown.h) in each writer: JSON, console, HTML.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "engine/check/check_result.h"
#include "report/html/html.h"
#include "report/locate_report.h"

namespace parity {
namespace {

LocateReport Narrowed() {
  LocateReport r;
  r.model = "m.onnx";
  LocateCulprit c{.fused_node = "/b/conv/Conv_nchwc", .op_type = "ReorderInput+Conv+ReorderOutput",
                  .covers = {"/b/conv/Conv", "/b/bn/BatchNormalization", "/b/Relu"}};
  c.local = {.tensor = "/b/Relu_output_0", .max_abs = 0.08, .score = 4.3, .pass = false};
  LocateNarrowing n{.complete = true, .sessions = 9, .sub_regions_run = 3};
  n.steps.push_back({.covers = {"/a/conv/Conv", "/a/Relu", "/b/conv/Conv", "/b/bn/BatchNormalization", "/b/Relu",
                                "/c/conv/Conv"},
                     .groups = 3,
                     .local = {.tensor = "y", .max_abs = 0.1, .score = 6, .pass = false}});
  n.steps.push_back({.covers = {"/b/conv/Conv", "/b/bn/BatchNormalization", "/b/Relu", "/c/conv/Conv"},
                     .groups = 2,
                     .measured = false});
  n.steps.push_back({.covers = c.covers, .groups = 1, .local = c.local});
  c.narrowing = n;
  r.culprits.push_back(c);
  r.culprits.push_back({.fused_node = "other"});
  return r;
}

TEST(LocateNarrowing, JsonCarriesTheStepsAndNullForOthers) {
  const auto j = LocateReportToJson(Narrowed());
  const auto& n = j["culprits"][0]["narrowing"];
  ASSERT_EQ(n["steps"].size(), 3u);
  EXPECT_EQ(n["steps"][0]["groups"], 3);
  EXPECT_EQ(n["steps"][0]["local"]["score"], 6);
  EXPECT_FALSE(n["steps"][1]["measured"].get<bool>());
  EXPECT_TRUE(n["steps"][1]["local"].is_null());
  EXPECT_EQ(n["steps"][2]["covers"].size(), 3u);
  EXPECT_TRUE(n["complete"].get<bool>());
  EXPECT_TRUE(n["note"].is_null());
  EXPECT_EQ(n["sub_regions_run"], 3);
  EXPECT_TRUE(j["culprits"][1]["narrowing"].is_null());
}

TEST(LocateNarrowing, ConsoleListsEachStep) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  PrintLocateSummary(Narrowed(), f);
  std::fclose(f);
  const std::string out(buf, size);
  std::free(buf);
  EXPECT_NE(out.find("narrowing to '/b/conv/Conv_nchwc'"), std::string::npos) << out;
  EXPECT_NE(out.find("6 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("not run"), std::string::npos) << out;
}

TEST(LocateNarrowing, HtmlListsEachStep) {
  CheckReport r;
  r.locate = Narrowed();
  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("class=\"narrowing\""), std::string::npos);
  EXPECT_NE(html.find("/b/bn/BatchNormalization"), std::string::npos);
  EXPECT_NE(html.find("not run"), std::string::npos);
}

}  // namespace
}  // namespace parity
