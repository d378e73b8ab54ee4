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

#include <fmt/format.h>

#include "core/npz.h"
#include "e2e_models.h"
#include "e2e_util.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using e2e::ReadJson;

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

// DIR/0.npz .. DIR/(n-1).npz: seeded images for ConvBnRelu's `input`.
void WriteImages(const fs::path& dir, int n) {
  fs::create_directories(dir);
  for (int i = 0; i < n; ++i) {
    std::vector<float> v(3 * 224 * 224);
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(((k * 2654435761u + i * 97u) % 1000u) / 500.0 - 1.0);
    TensorSet s;
    ASSERT_TRUE(s.Add("input", Tensor::FromVector(DType::kFloat32, Shape{1, 3, 224, 224}, v)));
    ASSERT_TRUE(WriteNpz(dir / fmt::format("{}.npz", i), s));
  }
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

// check --dataset across two releases (issue 55): the reference runs every
// sample on the wheel in a child process (one kept session), the target on
// the bundled ORT; the report names the reference's runtime.
TEST_F(Runtimes, ADatasetCheckAcrossRuntimesPassesAndNamesTheReferencesRuntime) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  WriteImages(Path("data"), 3);
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "check", Path("m.onnx"), "--dataset",
                            Path("data"), "--reference-ort-library", wheel.string(), "--json", Path("d.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = ReadJson(Path("d.json"));
  const auto& d = j.contains("dataset") ? j["dataset"] : j;
  EXPECT_EQ(d["count"], 3) << d.dump(1).substr(0, 2000);
  EXPECT_NE(d["reference"].get<std::string>().find(wheel.string()), std::string::npos) << d["reference"];
}

// The same planted kernel difference as above, on a dataset: every sample
// fails judged exactly, and the worst one is localized across the two
// runtimes to the fused node only the reference's plan makes.
TEST_F(Runtimes, ADatasetCheckAcrossRuntimesLocalizesAPlantedMissingFusion) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  WriteImages(Path("data"), 2);
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "check", Path("m.onnx"), "--dataset",
                            Path("data"), "--reference-ort-library", wheel.string(), "--reference-config", "all",
                            "--opt", "all", "--disable-optimizer", "NchwcTransformer", "--atol", "0", "--rtol", "0",
                            "--mode", "fixed", "--json", Path("d.json")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = ReadJson(Path("d.json"));
  const auto& d = j.contains("dataset") ? j["dataset"] : j;
  const auto& located = d["locate"]["samples"];
  ASSERT_FALSE(located.empty()) << d.dump(1).substr(0, 3000);
  const auto& l = located[0];
  EXPECT_TRUE(l["error"].is_null()) << l.dump(1);
  ASSERT_TRUE(l["first_divergence"].is_object()) << l.dump(1);
  EXPECT_GT(l["first_divergence"]["covers"].size(), 1u) << "the NCHWc fused Conv: " << l.dump(1);
  EXPECT_EQ(d["ranking"].size(), 1u) << "both samples first diverge at one fused node: " << d["ranking"].dump(1);
}

// A plugin EP on the reference's runtime: the parent's --ep-library reaches
// the child runner (with discovery off, the child could not find it itself).
TEST_F(Runtimes, APluginEpLibraryReachesTheReferencesChildRuntime) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  const std::string plugin = e2e::OpenVinoPluginInVenv();
  if (plugin.empty()) GTEST_SKIP() << "onnxruntime-ep-openvino is not installed in the venv";
  auto env = e2e::RunProgram({"env", "PARITY_EP_DISCOVERY=0", PARITY_BINARY, "env", "--ort-library", wheel.string(),
                              "--ep-library", "openvino=" + plugin});
  if (env.exit_code != 0 || env.out.find("OpenVINOExecutionProvider") == std::string::npos)
    GTEST_SKIP() << "the OpenVINO plugin does not load here (under ASan it cannot: RTLD_DEEPBIND): " << env.err;
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  std::ofstream(Path("ov.json")) << R"({"opt": "all", "providers": [{"name": "openvino", "options": )"
                                 << R"({"load_config": "{\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"f32\"}}"}}]})";
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", "PARITY_EP_DISCOVERY=0", PARITY_BINARY, "check",
                            Path("m.onnx"), "--reference-ort-library", wheel.string(), "--reference-config",
                            Path("ov.json"), "--ep-library", "openvino=" + plugin, "--runs", "1", "--json",
                            Path("c.json")});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  const auto j = ReadJson(Path("c.json"));
  EXPECT_EQ(j["reference_runtime"]["library"], wheel.string());
  EXPECT_EQ(j["config"]["reference"]["providers"][0]["name"], "openvino") << j["config"].dump();
  EXPECT_GT(j["samples"].size(), 0u);
}

TEST_F(Runtimes, CheckAcrossRuntimesRefusesWhatItCannotCompareInOneLine) {
  ASSERT_TRUE(ConvBnRelu().Save(Path("m.onnx")).has_value());
  WriteImages(Path("data"), 1);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--reference-ort-library", Path("nope.so")},
        std::vector<std::string>{"--reference-ort-library", Path("nope.so"), "--reference-model", Path("m.onnx")},
        std::vector<std::string>{"--reference-ort-library", Path("nope.so"), "--dataset", Path("data")}}) {
    std::vector<std::string> args = {"check", Path("m.onnx")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(ErrorLines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(extra[2 % extra.size()] == "--reference-model" ? "--reference-model" : "nope.so"), std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace parity
