// Execution providers through the real binary (issue 24): the OpenVINO
// plugin EP of the venv's onnxruntime-ep-openvino, found without flags,
// listed by `parity env`, run by check / run / bench / locate, with its
// provider options from the command line and the config JSON; the bf16
// diagnosis; bad --ep-library / --provider-option input exits 2. CUDA tests
// skip with a reason where the ORT has no CUDA EP.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/npz.h"
#include "e2e_models.h"
#include "e2e_util.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

constexpr char kF32Hint[] = R"(openvino:load_config={"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})";

using e2e::ReadJson;

// The plugin parity finds in this checkout's venv; empty when the venv lacks it.
std::string OpenVinoPlugin() { return e2e::OpenVinoPluginInVenv(); }

// Whether the plugin offers a device on this machine: OpenVINO's plugin EP
// lists Intel hardware only (on an AMD CPU `parity env` names the library
// and no OpenVINO device), so its tests can run on Intel machines only.
bool OpenVinoHasADevice() {
  static const bool has = [] {
    const auto r = e2e::RunParity({"env", "--ep-library", "openvino=" + OpenVinoPlugin()});
    return r.out.find("ep device     OpenVINOExecutionProvider") != std::string::npos;
  }();
  return has;
}

class OpenVino : public ::testing::Test {
 protected:
  void SetUp() override {
    // Discovery looks in the binary's own environment only (issue 46): the
    // checkout's build/parity finds the venv's packages through VIRTUAL_ENV.
    ::setenv("VIRTUAL_ENV", fs::path(PARITY_PYTHON).parent_path().parent_path().c_str(), 1);
    if (OpenVinoPlugin().empty())
      GTEST_SKIP() << (e2e::kSanitized ? "the OpenVINO plugin loads TBB with RTLD_DEEPBIND, which ASan refuses"
                                       : "onnxruntime-ep-openvino is not installed in the venv");
    if (!OpenVinoHasADevice())
      GTEST_SKIP() << "the OpenVINO plugin offers no device on this CPU (it lists Intel hardware only; "
                      "`parity env` shows the library and no OpenVINO device)";
    ASSERT_TRUE(ConvBnRelu().Save(dir_.path() / "m.onnx").has_value());
    ASSERT_TRUE(ResidualTrunk(4, 2).Save(dir_.path() / "trunk.onnx").has_value());
  }
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }
  e2e::TempDir dir_{"parity_ep"};
};

// Found without flags, the library is listed; it is loaded (and its devices
// listed) only where a provider or --ep-library names it (issue 46, class 1).
TEST_F(OpenVino, EnvListsTheLibraryFoundWithoutFlagsAndItsDevicesWhenNamed) {
  auto listed = e2e::RunParity({"env"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("python package onnxruntime_ep_openvino"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("ep device     OpenVINOExecutionProvider"), std::string::npos) << listed.out;
  auto r = e2e::RunParity({"env", "--ep-library", "openvino=" + OpenVinoPlugin(), "--json", Path("env.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ep device     OpenVINOExecutionProvider (Intel), cpu"), std::string::npos) << r.out;
  const auto j = ReadJson(Path("env.json"))["env"];
  bool found = false;
  for (const auto& d : j["ep_devices"])
    found = found || (d["ep_name"] == "OpenVINOExecutionProvider" && d["ep_vendor"] == "Intel" &&
                      d["device_type"] == "cpu" && d["library"] == "openvino");
  EXPECT_TRUE(found) << j["ep_devices"].dump();
  EXPECT_FALSE(j["ort_library"].get<std::string>().empty());
}

TEST_F(OpenVino, DiscoveryOffMeansNoOpenVinoAndAnExplicitLibraryBringsItBack) {
  auto off = e2e::RunProgram({"env", "PARITY_EP_DISCOVERY=0", PARITY_BINARY, "locate", Path("m.onnx"),
                              "--providers", "openvino"});
  EXPECT_EQ(off.exit_code, 2) << off.err;
  EXPECT_NE(off.err.find("--ep-library"), std::string::npos) << off.err;
  auto on = e2e::RunProgram({"env", "PARITY_EP_DISCOVERY=0", PARITY_BINARY, "env", "--ep-library",
                             "ov=" + OpenVinoPlugin()});
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find("OpenVINOExecutionProvider (Intel), cpu, library ov"), std::string::npos) << on.out;
}

TEST_F(OpenVino, BadLibraryOrOptionIsOneLineAndExit2) {
  auto missing = e2e::RunParity({"env", "--ep-library", "x=/nonexistent/libx.so"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(e2e::Lines(missing.err).size(), 1u) << missing.err;
  // Not a library at all: refused by the library checks before ORT opens it
  // (core/library_file.h), in one line naming the plugin and the file.
  auto not_ep = e2e::RunParity({"env", "--ep-library", "x=" + Path("m.onnx")});
  EXPECT_EQ(not_ep.exit_code, 2);
  EXPECT_EQ(e2e::Lines(not_ep.err).size(), 1u) << not_ep.err;
  EXPECT_NE(not_ep.err.find("plugin EP library 'x'"), std::string::npos) << not_ep.err;
  EXPECT_NE(not_ep.err.find("not a shared library (no ELF header)"), std::string::npos) << not_ep.err;
  auto bad = e2e::RunParity({"check", Path("m.onnx"), "--providers", "openvino", "--provider-option", "nocolon"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("expected EP:KEY=VALUE"), std::string::npos) << bad.err;
  auto stray = e2e::RunParity({"check", Path("m.onnx"), "--provider-option", "openvino:a=b"});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("not among the providers"), std::string::npos) << stray.err;
}

// OpenVINO's CPU plugin runs bf16 by default on a CPU with BF16: check fails
// and says why; the f32 hint passes. Where the CPU has no BF16 the default
// is f32 already and the first half does not apply.
TEST_F(OpenVino, CheckNamesBf16AndTheF32HintPasses) {
  auto env = e2e::RunParity({"env"});
  const bool bf16 = env.out.find("capabilities BF16") != std::string::npos;
  auto d = e2e::RunParity({"check", Path("m.onnx"), "--providers", "openvino", "--report", Path("r1")});
  if (bf16) {
    EXPECT_EQ(d.exit_code, 1) << d.out << d.err;
    EXPECT_NE(d.out.find("consistent with bf16 arithmetic"), std::string::npos) << d.out;
    EXPECT_NE(d.out.find("INFERENCE_PRECISION_HINT"), std::string::npos) << d.out;
    const auto j = ReadJson(Path("r1/report.json"));
    EXPECT_EQ(j["arithmetic"]["arithmetic"], "bf16");
    EXPECT_NE(j["arithmetic"]["fix"].get<std::string>().find("load_config"), std::string::npos);
    EXPECT_EQ(j["target_assignment"][0]["ep"], "OpenVINOExecutionProvider");
    std::ifstream html(Path("r1/report.html"));
    const std::string text((std::istreambuf_iterator<char>(html)), {});
    EXPECT_NE(text.find("id=\"arithmetic\""), std::string::npos);
  }
  auto f = e2e::RunParity({"check", Path("m.onnx"), "--providers", "openvino", "--provider-option", kF32Hint,
                           "--report", Path("r2")});
  const auto j2 = ReadJson(Path("r2/report.json"));
  for (const auto& failed : j2["failed_tests"])
    EXPECT_FALSE(failed["id"].get<std::string>().starts_with("numerics.typical")) << failed.dump();
  EXPECT_TRUE(j2["arithmetic"].is_null()) << j2["arithmetic"].dump();
  if (!bf16) GTEST_SKIP() << "the f32 half ran; the bf16 half needs a CPU whose OpenVINO device lists BF16 (AMX or "
                             "AVX512-BF16 Xeons), which this one does not";
}

TEST_F(OpenVino, ConfigJsonProviderOptionsActLikeTheFlag) {
  std::ofstream(Path("ov.json")) << R"({"opt": "all", "providers": [{"name": "openvino", "options": )"
                                 << R"({"load_config": "{\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"f32\"}}"}}]})";
  auto r = e2e::RunParity({"locate", Path("m.onnx"), "--target", Path("ov.json"), "--json", Path("l.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = ReadJson(Path("l.json"));
  EXPECT_EQ(j["target"]["providers"][0]["options"]["load_config"], R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})");
}

// The CPU EP as reference, OpenVINO as target: the compiled region is
// narrowed by sub-models run on OpenVINO to a node inside it.
TEST_F(OpenVino, LocateNamesANodeInsideTheCompiledRegion) {
  auto env = e2e::RunParity({"env"});
  if (env.out.find("capabilities BF16") == std::string::npos) GTEST_SKIP() << "this CPU has no BF16";
  auto r = e2e::RunParity({"locate", Path("trunk.onnx"), "--reference", "disable", "--providers", "openvino",
                           "--json", Path("l.json")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = ReadJson(Path("l.json"));
  ASSERT_FALSE(j["culprits"].empty());
  const auto& top = j["culprits"][0];
  EXPECT_NE(top["op_type"].get<std::string>().find("OpenVINOExecutionProvider"), std::string::npos) << top.dump();
  EXPECT_EQ(top["fused_node"], top["covers"][0]) << "a node inside the subgraph, not the subgraph";
  ASSERT_TRUE(top.contains("narrowing")) << top.dump();
  size_t trunk_nodes = 0;
  for (const auto& a : j["target_assignment"]) trunk_nodes += a["nodes"].size();
  EXPECT_LT(top["covers"].size(), trunk_nodes) << "narrowed inside the compiled region";
  EXPECT_EQ(j["arithmetic"]["arithmetic"], "bf16") << j["arithmetic"].dump();
  EXPECT_NE(r.out.find("why: errors consistent with bf16"), std::string::npos) << r.out;
}

TEST_F(OpenVino, RunAndBenchRunOnIt) {
  auto inputs = e2e::RunParity({"inputs", Path("m.onnx"), "--kind", "typical", "-o", Path("in.npz")});
  ASSERT_EQ(inputs.exit_code, 0) << inputs.err;
  auto run = e2e::RunParity({"run", Path("m.onnx"), "--inputs", Path("in.npz"), "--providers", "openvino", "-o",
                             Path("out.npz")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(Path("out.npz")));
  auto bench = e2e::RunParity({"bench", Path("m.onnx"), "--providers", "openvino", "--runs", "3", "--warmup", "1",
                               "--json", Path("b.json")});
  EXPECT_EQ(bench.exit_code, 0) << bench.out << bench.err;
  const auto j = ReadJson(Path("b.json"));
  bool ov = false;
  for (const auto& c : j["configs"]) ov = ov || c["label"].get<std::string>().find("openvino") != std::string::npos;
  EXPECT_TRUE(ov) << j["configs"].dump();
}

// The plugin libraries are registered on a thread of their own while
// baseline and check read the model (ort::WarmUpInBackground); a
// library that cannot be registered there is not an error of the command,
// and its failure is not lost: the report's env names it.
// PARITY_EP_LIBRARY names a library as --ep-library does: a path that is no
// library is the user's mistake, refused in one line (exit 2) before anything
// runs, never a verdict nor a warning in the env (issue 46, class 7).
TEST(WarmUp, ABadPluginLibraryInTheEnvironmentIsBadInput) {
  e2e::TempDir dir("parity_ep_bg");
  ASSERT_TRUE(OpsetModel(17).Save(dir.path() / "m.onnx").has_value());
  Tensor x(DType::kFloat32, {2, 8});
  for (float& v : x.mutable_view<float>()) v = 0.5f;
  TensorSet inputs;
  ASSERT_TRUE(inputs.Add("x", x).has_value());
  ASSERT_TRUE(WriteNpz(dir.path() / "in.npz", inputs).has_value());
  const std::string missing = "bad=" + (dir.path() / "missing_plugin.so").string();
  for (const std::vector<std::string> args :
       {std::vector<std::string>{"baseline", (dir.path() / "m.onnx").string(), "--inputs",
                                 (dir.path() / "in.npz").string(), "-o", (dir.path() / "bl").string()},
        std::vector<std::string>{"check", (dir.path() / "m.onnx").string(), "--inputs",
                                 (dir.path() / "in.npz").string(), "--json", (dir.path() / "r.json").string()}}) {
    std::vector<std::string> argv = {"env", "PARITY_EP_LIBRARY=" + missing, PARITY_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = e2e::RunProgram(argv);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.err;
    EXPECT_NE(r.err.find("PARITY_EP_LIBRARY"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("missing_plugin.so"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "bl"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

TEST(Cuda, CheckRunsOnCudaWhereThereIsOne) {
  auto env = e2e::RunParity({"env"});
  if (env.out.find("CUDAExecutionProvider") == std::string::npos)
    GTEST_SKIP() << "this ONNX Runtime has no CUDA EP (no GPU build here); scripts/gpu-check.sh runs it on a GPU";
  e2e::TempDir dir("parity_cuda");
  ASSERT_TRUE(ConvBnRelu().Save(dir.path() / "m.onnx").has_value());
  auto r = e2e::RunParity({"check", (dir.path() / "m.onnx").string(), "--providers", "cuda", "--provider-option",
                           "cuda:use_tf32=0"});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.exit_code, 3) << r.err;
}

}  // namespace
}  // namespace parity
