// `parity check` and `parity demo` through the real binary (issue 7): a
// YOLO-like export with dynamic batch/height/width passes on samples of
// several sizes; a variant exported without dynamic axes fails naming the
// axis; reports validate against docs/report.schema.json; exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "e2e_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

bool HaveTorch() { return e2e::RunProgram({PARITY_PYTHON, "-c", "import torch, onnx"}).exit_code == 0; }

using e2e::ReadJson;

// Validates with Debian's python3-jsonschema; empty when valid.
std::string SchemaErrors(const fs::path& report) {
  const std::string script =
      "import json, sys, jsonschema\n"
      "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n";
  auto r = e2e::RunProgram({PARITY_PYTHON, "-c", script,
                            (fs::path(PARITY_SOURCE_DIR) / "docs/report.schema.json").string(), report.string()});
  return r.exit_code == 0 ? "" : r.err;
}

class CheckYolo : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HaveTorch()) return;
    dir_ = e2e::MakeTempDir("parity-check-yolo");
    // the package and the test zoo (python/tests/zoo: YoloLike)
    const fs::path src = PARITY_SOURCE_DIR;
    const std::string py = (src / "python").string() + ":" + (src / "python/tests").string();
    for (const auto& [name, dynamic] : std::vector<std::pair<std::string, bool>>{{"dynamic", true}, {"static", false}}) {
      std::vector<std::string> argv = {"env", "PYTHONPATH=" + py, PARITY_PYTHON, "-m", "parity.torch", "dump",
                                       "zoo.models:YoloLike", "-o", (dir_ / (name + "_dump")).string(),
                                       "--export", (dir_ / (name + ".onnx")).string(), "--opset", "17"};
      if (dynamic)
        for (const char* axis : {"images:0:batch", "images:2:height", "images:3:width"}) {
          argv.push_back("--dynamic");
          argv.push_back(axis);
        }
      auto r = e2e::RunProgram(argv);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    ASSERT_TRUE(HaveTorch()) << PARITY_PYTHON " lacks torch or onnx (make creates .venv/)";
  }
  static fs::path dir_;
};
fs::path CheckYolo::dir_;

TEST_F(CheckYolo, DynamicExportPassesOnSamplesOfSeveralSizes) {
  const fs::path report = dir_ / "dynamic_report";
  auto r = e2e::RunParity({"check", (dir_ / "dynamic.onnx").string(), "--torch", (dir_ / "dynamic_dump").string(),
                           "--runs", "3", "--report", report.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(SchemaErrors(report / "report.json"), "");
  const auto j = ReadJson(report / "report.json");
  EXPECT_EQ(j["overall_status"], "PASS");
  std::set<std::string> shapes;
  bool saw_anomaly_behaviour = false;
  for (const auto& s : j["samples"]) {
    if (s["kind"] == "boundary" && s["status"] == "PASS") shapes.insert(s["input_summary"].get<std::string>());
    if (s["kind"] == "anomaly" && !s.value("behaviour", "").empty()) saw_anomaly_behaviour = true;
  }
  EXPECT_GE(shapes.size(), 2u) << "boundary samples of different sizes";
  EXPECT_TRUE(saw_anomaly_behaviour);
  EXPECT_TRUE(fs::exists(report / "report.html"));
  EXPECT_TRUE(fs::exists(report / "junit.xml"));
}

TEST_F(CheckYolo, StaticExportFailsNamingTheAxis) {
  const fs::path json = dir_ / "static.json";
  auto r = e2e::RunParity({"check", (dir_ / "static.onnx").string(), "--torch", (dir_ / "dynamic_dump").string(),
                           "--runs", "3", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("axis 2 was asked dynamic ('height') but is fixed to 64"), std::string::npos) << r.out;
  const auto j = ReadJson(json);
  EXPECT_EQ(j["overall_status"], "FAIL");
  bool named = false;
  for (const auto& f : j["failed_tests"]) named |= f["id"] == "signature.dynamic_axes.images.0";
  EXPECT_TRUE(named) << j["failed_tests"].dump(2);
}

TEST(CheckExitCodes, BadInputIsTwo) {
  EXPECT_EQ(e2e::RunParity({"check", "/nonexistent/model.onnx"}).exit_code, 2);
  EXPECT_EQ(e2e::RunParity({"check"}).exit_code, 2);
  auto r = e2e::RunParity({"check", "/nonexistent/model.onnx", "--opt", "sideways"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
}

TEST(Demo, HealthyPassesPlantedFaultFailsNamingTheNode) {
  const fs::path out = e2e::MakeTempDir("parity-demo");
  auto r = e2e::RunParity({"demo", "--out", out.string(), "--runs", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* c : {"conv_bn_relu", "planted_fault"}) {
    EXPECT_EQ(SchemaErrors(out / c / "report.json"), "") << c;
    EXPECT_TRUE(fs::exists(out / c / "report.html")) << c;
  }
  EXPECT_EQ(ReadJson(out / "conv_bn_relu" / "report.json")["overall_status"], "PASS");
  const auto planted = ReadJson(out / "planted_fault" / "report.json");
  EXPECT_EQ(planted["overall_status"], "FAIL");
  EXPECT_NE(planted["failed_tests"].dump().find("/layer2/1/conv2/Conv"), std::string::npos);
  fs::remove_all(out);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// A model ORT loads but cannot run on the given sample (a Reshape to an
// impossible shape): `run` reports a runtime failure (3); `check` catches the
// error per sample, reports it and fails the check (1).
TEST(CheckExitCodes, RuntimeFailureIsThreeForRunAndAFailedSampleForCheck) {
  const fs::path dir = e2e::MakeTempDir("parity-exit3");
  auto gen = e2e::WriteReshapeModel(dir.string(), "x=np.ones((2, 8), np.float32), s=np.array([3, 5], np.int64)");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto run = e2e::RunParity({"run", (dir / "m.onnx").string(), "--inputs", (dir / "in.npz").string(), "-o",
                             (dir / "o.npz").string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("the_reshape"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir / "o.npz"));
  auto check = e2e::RunParity({"check", (dir / "m.onnx").string(), "--inputs", (dir / "in.npz").string(), "--runs",
                               "2", "--json", (dir / "r.json").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  const auto j = ReadJson(dir / "r.json");
  ASSERT_FALSE(j["samples"].empty());
  EXPECT_NE(j["samples"][0]["error"].get<std::string>().find("the_reshape"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity
