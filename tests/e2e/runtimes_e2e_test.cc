// Two ONNX Runtime releases side by side (issue 43, docs/locate.md "Two
// runtimes"): `locate --reference-ort-library A --target-ort-library B` runs
// one model at one config on both, the one that is not the process's in a
// child `parity runner-worker`, compares their fused plans and their tensors
// node by node, and names both runtimes. The bundled ORT and the venv's
// onnxruntime wheel are the two releases here; the tests that need the wheel
// skip with a reason where it is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "e2e_models.h"
#include "e2e_util.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

nlohmann::json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

using e2e::WheelOrt;

// The bundled ORT, as `parity env` reports it.
fs::path BundledOrt(const fs::path& dir) {
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "env", "--json", (dir / "env.json").string()});
  if (r.exit_code != 0) return {};
  return ReadJson(dir / "env.json")["env"].value("ort_library", "");
}

// Lines of stderr that are errors (the sample note may precede them).
size_t ErrorLines(const std::string& err) {
  size_t n = 0;
  for (const auto& line : e2e::Lines(err)) n += line.starts_with("parity: error");
  return n;
}

class Runtimes : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }
  e2e::TempDir dir_{"parity_runtimes"};
};

TEST_F(Runtimes, BundledOrtAndTheWheelInOneLocateAreBothNamedAndTheirPlansIdentical) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  const fs::path bundled = BundledOrt(dir_.path());
  ASSERT_FALSE(bundled.empty());
  ASSERT_TRUE(TransformerBlock().Save(Path("t.onnx")).has_value());
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "locate", Path("t.onnx"), "--opt", "all",
                            "--reference-ort-library", bundled.string(), "--target-ort-library", wheel.string(),
                            "--json", Path("l.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = ReadJson(Path("l.json"));
  const auto& rt = j.at("runtimes");
  EXPECT_EQ(rt["reference"]["ort"]["library"], bundled.string());
  EXPECT_EQ(rt["target"]["ort"]["library"], wheel.string());
  EXPECT_EQ(rt["reference"]["kind"], "ort");        // the process's own: in process
  EXPECT_EQ(rt["target"]["kind"], "ort_child");      // another release: in a child process
  EXPECT_NE(rt["reference"]["ort"]["version"], rt["target"]["ort"]["version"]);
  EXPECT_EQ(rt["plans_identical"], true) << rt.dump(1);
  EXPECT_GT(rt["target_fused"].get<int>(), 0);
  EXPECT_TRUE(j["observer_check"].get<bool>());
  EXPECT_GT(j["summary"]["pass"].get<int>(), 0);
  for (const std::string v : {rt["reference"]["ort"]["version"], rt["target"]["ort"]["version"]})
    EXPECT_NE(r.out.find("onnxruntime " + v), std::string::npos) << "the console names both: " << r.out;
  EXPECT_NE(r.out.find("plans: identical"), std::string::npos) << r.out;
}

// A release that lacks a fusion, planted: the same library twice, the target
// with NchwcTransformer switched off by name (ORT's x86 layout fusion that
// folds Conv+BN+Relu into one blocked-layout node). Judged exactly (atol =
// rtol = 0), the output departs, and the culprit is a fused node that only
// one side makes, named so; --repro writes both versions and the command.
TEST_F(Runtimes, APlantedMissingFusionIsNamedAtItsFusedNode) {
  fs::path lib = WheelOrt();
  if (lib.empty()) lib = BundledOrt(dir_.path());
  ASSERT_FALSE(lib.empty());
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  auto r = e2e::RunParity({"locate", Path("m.onnx"), "--reference", "all", "--opt", "all", "--disable-optimizer",
                           "NchwcTransformer", "--reference-ort-library", lib.string(), "--target-ort-library",
                           lib.string(), "--atol", "0", "--rtol", "0", "--mode", "fixed", "--json", Path("l.json"),
                           "--repro", Path("repro")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = ReadJson(Path("l.json"));
  const auto& rt = j.at("runtimes");
  EXPECT_EQ(rt["plans_identical"], false);
  ASSERT_FALSE(rt["only_reference"].empty()) << rt.dump(1);
  EXPECT_NE(rt["only_reference"][0]["op_type"].get<std::string>().find("Conv"), std::string::npos) << rt.dump(1);
  ASSERT_FALSE(j["first_divergence"].is_null());
  ASSERT_FALSE(j["culprits"].empty());
  const auto& c = j["culprits"][0];
  EXPECT_TRUE(c["fused"].get<bool>()) << c.dump(1);
  EXPECT_GT(c["covers"].size(), 1u) << c.dump(1);
  EXPECT_FALSE(c["local"]["pass"].get<bool>()) << "its own kernel differs: " << c.dump(1);
  EXPECT_NE(c["note"].get<std::string>().find("does not make this fusion"), std::string::npos) << c.dump(1);
  EXPECT_NE(r.out.find("only onnxruntime"), std::string::npos) << r.out;
  // The repro: the cut model, its inputs, both results, both versions and the command.
  for (const char* f : {"model.onnx", "inputs.npz", "expected.npz", "actual.npz", "README.md"})
    EXPECT_TRUE(fs::exists(Path("repro") + "/" + f)) << f;
  std::ifstream readme(Path("repro/README.md"));
  const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--target-ort-library " + lib.string()), std::string::npos) << text;
  EXPECT_NE(text.find(rt["reference"]["ort"]["version"].get<std::string>()), std::string::npos) << text;
}

TEST_F(Runtimes, AMissingRuntimeLibraryIsOneLineAndExit2) {
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  auto r = e2e::RunParity({"locate", Path("m.onnx"), "--target-ort-library", Path("nope.so")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(ErrorLines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("nope.so"), std::string::npos) << r.err;
}

TEST_F(Runtimes, ALibraryThatIsNoOrtIsRefusedWithTheChildsLine) {
  const fs::path text = Path("fake.so");
  std::ofstream(text) << "not a library\n";
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  auto r = e2e::RunParity({"locate", Path("m.onnx"), "--target-ort-library", text.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(ErrorLines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not a shared library"), std::string::npos) << "the child's own reason: " << r.err;
  EXPECT_NE(r.err.find("fake.so"), std::string::npos) << r.err;
}

TEST_F(Runtimes, EnvListsEachRuntimeItIsGiven) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  const fs::path bundled = BundledOrt(dir_.path());
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "env", "--runtime", wheel.string(),
                            "--runtime", bundled.string(), "--json", Path("e.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rt = ReadJson(Path("e.json"))["env"]["runtimes"];
  ASSERT_EQ(rt.size(), 2u) << rt.dump(1);
  EXPECT_EQ(rt[0]["library"], wheel.string());
  EXPECT_EQ(rt[1]["library"], bundled.string());
  EXPECT_NE(rt[0]["version"], rt[1]["version"]);
  EXPECT_NE(r.out.find("runtime       " + rt[0]["version"].get<std::string>()), std::string::npos) << r.out;
}

// check on two releases: the target on the process's ORT (the bundled one),
// the reference on the wheel in a child process at the same config. Both are
// named in report.json, the console and the verdict's "judged against"; the
// passing check's curve is left to locate, saying so.
TEST_F(Runtimes, CheckOnTheBundledOrtAgainstTheWheelPassesAndNamesBoth) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  const fs::path bundled = BundledOrt(dir_.path());
  ASSERT_FALSE(bundled.empty());
  ASSERT_TRUE(TransformerBlock().Save(Path("t.onnx")).has_value());
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "check", Path("t.onnx"),
                            "--reference-ort-library", wheel.string(), "--runs", "2", "--report", Path("rep")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = ReadJson(Path("rep/report.json"));
  ASSERT_TRUE(j["reference_runtime"].is_object()) << j["reference_runtime"].dump();
  EXPECT_EQ(j["reference_runtime"]["library"], wheel.string());
  EXPECT_EQ(j["env"]["ort_library"], bundled.string());
  const std::string ref_version = j["reference_runtime"]["version"], target_version = j["env"]["ort_version"];
  EXPECT_NE(ref_version, target_version);
  EXPECT_EQ(j["config"]["reference"]["opt"], "all") << "the target's config on both";
  EXPECT_EQ(j["config"]["target"]["opt"], "all");
  EXPECT_EQ(j["config"]["reference"]["ort_library"], wheel.string());
  const std::string against = j["judged_against"]["text"];
  for (const std::string& v : {ref_version, target_version}) {
    EXPECT_NE(against.find("onnxruntime " + v), std::string::npos) << against;
    EXPECT_NE(r.out.find("onnxruntime " + v), std::string::npos) << r.out;
  }
  EXPECT_GT(j["samples"].size(), 1u) << "every sample ran on both";
  EXPECT_TRUE(j["layer_curve"].empty());
  EXPECT_NE(j["notes"].dump().find("another ONNX Runtime"), std::string::npos) << j["notes"].dump();
}

// A planted kernel difference found by check: the reference (the wheel, at
// `all`) makes the NCHWc fusion, the target (the bundled ORT) has it switched
// off by name. Judged exactly, check fails and localizes across the two
// runtimes to the fused node only one of them makes.
TEST_F(Runtimes, ACheckAcrossRuntimesLocalizesAPlantedMissingFusion) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "check", Path("m.onnx"),
                            "--reference-ort-library", wheel.string(), "--reference-config", "all", "--opt", "all",
                            "--disable-optimizer", "NchwcTransformer", "--atol", "0", "--rtol", "0", "--mode", "fixed",
                            "--runs", "1", "--json", Path("c.json")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = ReadJson(Path("c.json"));
  const std::string ref_version = j["reference_runtime"]["version"];
  EXPECT_NE(r.out.find("vs [all] on onnxruntime " + ref_version + ": "), std::string::npos) << r.out;
  ASSERT_TRUE(j["locate"].is_object()) << "a failure is localized";
  const auto& rt = j["locate"].at("runtimes");
  EXPECT_EQ(rt["plans_identical"], false) << rt.dump(1);
  EXPECT_EQ(rt["reference"]["ort"]["library"], wheel.string());
  ASSERT_FALSE(j["locate"]["culprits"].empty()) << j["locate"].dump(1);
  const auto& c = j["locate"]["culprits"][0];
  EXPECT_TRUE(c["fused"].get<bool>()) << c.dump(1);
  EXPECT_NE(c["note"].get<std::string>().find("does not make this fusion"), std::string::npos) << c.dump(1);
}

TEST_F(Runtimes, CheckAcrossRuntimesRefusesWhatItCannotCompareInOneLine) {
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--reference-ort-library", Path("nope.so")},
        std::vector<std::string>{"--reference-ort-library", Path("nope.so"), "--reference-model", Path("m.onnx")},
        std::vector<std::string>{"--reference-ort-library", Path("nope.so"), "--dataset", Path("m.onnx")}}) {
    std::vector<std::string> args = {"check", Path("m.onnx")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(ErrorLines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(extra.size() == 2 ? "nope.so" : extra[2]), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace parity
