#include "report/json/check_json.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/json_out.h"
#include "core/testing/temp_dir.h"
#include "report/report_test_util.h"

namespace parity {
namespace {

using nlohmann::json;
using testing_util::MakeSampleReport;
using testing_util::RunCommand;
using testing_util::ShellQuote;

constexpr const char* kPython = PARITY_PYTHON;

// Validates `instance` against docs/report.schema.json with python3-jsonschema;
// returns "" when valid, else the validator's messages. Skips without it.
std::string SchemaErrors(const json& instance, const std::string& tag) {
  const testing::TempDir dir_tmp("parity_report_" + tag);
  const auto dir = dir_tmp.path();
  const auto path = dir / "report.json";
  std::ofstream(path) << ToJsonText(instance, 2);
  const std::string schema = std::string(PARITY_SOURCE_DIR) + "/docs/report.schema.json";
  const std::string script =
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "cls = jsonschema.validators.validator_for(schema)\n"
      "cls.check_schema(schema)\n"
      "errors = sorted(cls(schema).iter_errors(json.load(open(sys.argv[2]))), key=lambda e: list(e.path))\n"
      "for e in errors: print('/'.join(map(str, e.path)) + ': ' + e.message[:200])\n"
      "print('VALID' if not errors else 'INVALID')\n";
  std::string out;
  const int rc = RunCommand(std::string(kPython) + " -c " + ShellQuote(script) + " " + ShellQuote(schema) +
                                " " + ShellQuote(path.string()) + " 2>&1",
                            &out);
  if (rc != 0) return "python failed (" + std::to_string(rc) + "): " + out;
  if (out.ends_with("VALID\n") && !out.ends_with("INVALID\n")) return "";
  return out;
}

bool HaveJsonSchema() {
  return RunCommand(std::string(kPython) + " -c 'import jsonschema' 2>/dev/null", nullptr) == 0;
}

// ort_runs: each step's runs in the order they ran, and their total.
TEST(CheckJson, OrtRunsArePerStepWithTheirTotal) {
  CheckReport r = MakeSampleReport();
  r.ort_runs = {{.step = "reference pass", .runs = 7}, {.step = "numerics", .runs = 7}, {.step = "locate", .runs = 3}};
  const json j = CheckReportToJson(r);
  EXPECT_EQ(j["ort_runs"]["total"], 17);
  ASSERT_EQ(j["ort_runs"]["steps"].size(), 3u);
  EXPECT_EQ(j["ort_runs"]["steps"][0]["step"], "reference pass");
  EXPECT_EQ(j["ort_runs"]["steps"][2]["runs"], 3);
  EXPECT_EQ(CheckReportToJson(CheckReport{})["ort_runs"]["total"], 0);
}

TEST(CheckJson, HasEveryRequiredKey) {
  const json j = CheckReportToJson(MakeSampleReport());
  for (const char* key :
       {"schema", "tool", "env", "model", "config", "overall_status", "failed_tests", "stages", "samples",
        "metrics", "performance", "layer_curve", "locate", "alignment"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["schema"], "parity.check/1");
  EXPECT_EQ(j["overall_status"], "FAIL");
  for (const char* key : {"path", "sha256", "opsets", "inputs", "outputs"})
    EXPECT_TRUE(j["model"].contains(key));
  ASSERT_EQ(j["failed_tests"].size(), 1u);
  EXPECT_EQ(j["failed_tests"][0]["stage"], "numerics");
  EXPECT_EQ(j["failed_tests"][0]["id"], "numerics.anomaly_nan." + testing_util::kOddName);
  EXPECT_EQ(j["stages"]["numerics"]["status"], "FAIL");
  EXPECT_EQ(j["stages"]["robustness"]["status"], "SKIPPED");
  EXPECT_EQ(j["stages"]["syntax"]["index"], 0);
  EXPECT_EQ(j["performance"].size(), 2u);
  EXPECT_EQ(j["performance"][1]["latency"]["samples_ms"].size(), 50u);
  EXPECT_EQ(j["layer_curve"].size(), 60u);
  EXPECT_EQ(j["locate"]["schema"], "parity.locate/1");
}

TEST(CheckJson, NonFiniteNumbersAreStrings) {
  const json j = CheckReportToJson(MakeSampleReport());
  EXPECT_EQ(j["samples"][0]["outputs"][0]["metrics"]["snr_db"], "inf");
  EXPECT_EQ(j["layer_curve"][50]["error_ratio"], "inf");
  EXPECT_EQ(j["samples"][1]["outputs"][1]["metrics"]["nan_mismatch"], 3);
  // The dump is strict JSON: it parses back.
  EXPECT_EQ(json::parse(ToJsonText(j))["layer_curve"].size(), 60u);
}

TEST(CheckJson, SummaryNamesTheWorstOutput) {
  const json m = CheckMetricsSummary(MakeSampleReport());
  EXPECT_EQ(m["outputs_compared"], 3);
  EXPECT_EQ(m["outputs_failed"], 1);
  EXPECT_EQ(m["total_mismatches"], 12);
  EXPECT_EQ(m["total_nan_mismatch"], 3);
  EXPECT_EQ(m["worst_max_abs"]["value"], 0.5);
  EXPECT_EQ(m["worst_max_abs"]["sample"], "anomaly_nan");
  EXPECT_EQ(m["worst_max_abs"]["output"], testing_util::kOddName);
  EXPECT_EQ(m["min_cosine"]["value"], 0.93);
  EXPECT_EQ(m["min_snr_db"]["value"], 12.5);
}

TEST(CheckJson, EmptyReportHasNullSummariesAndModelKeys) {
  CheckReport r;
  const json j = CheckReportToJson(r);
  EXPECT_EQ(j["overall_status"], "PASS");
  EXPECT_TRUE(j["metrics"]["worst_max_abs"].is_null());
  EXPECT_TRUE(j["model"]["sha256"].is_null());
  EXPECT_TRUE(j["locate"].is_null());
  EXPECT_TRUE(j["stages"].is_object());
}

TEST(CheckJson, InvalidUtf8InNamesIsReplacedNotThrown) {
  CheckReport r = MakeSampleReport();
  r.samples[0].outputs[0].output = "bad\xff\xfename";
  const std::string text = ToJsonText(CheckReportToJson(r));
  EXPECT_NE(text.find("bad\xEF\xBF\xBD\xEF\xBF\xBDname"), std::string::npos);
}

TEST(CheckJsonSchema, SampleReportValidates) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  EXPECT_EQ(SchemaErrors(CheckReportToJson(MakeSampleReport()), "sample"), "");
  EXPECT_EQ(SchemaErrors(CheckReportToJson(CheckReport{}), "empty"), "");
}

TEST(CheckJsonSchema, RejectsBrokenReports) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  json j = CheckReportToJson(MakeSampleReport());
  json bad = j;
  bad["overall_status"] = "MAYBE";
  EXPECT_NE(SchemaErrors(bad, "status"), "");
  bad = j;
  bad.erase("failed_tests");
  EXPECT_NE(SchemaErrors(bad, "missing"), "");
  bad = j;
  bad["samples"][1]["outputs"][1]["metrics"]["max_abs"] = "huge";
  EXPECT_NE(SchemaErrors(bad, "number"), "");
  bad = j;
  bad["performance"][0]["latency"].erase("p99_ms");
  EXPECT_NE(SchemaErrors(bad, "latency"), "");
}

}  // namespace
}  // namespace parity
