// Which ONNX Runtime runs (issue 24, src/ort/ort_library.h): the bundled one
// by default; --ort-library PATH and PARITY_ORT_LIBRARY load another, and
// every command runs on it and every report says which (its version and its
// file). A file that is no usable ORT (missing, a text file, a shared library
// without OrtGetApiBase, an ORT older than the C API parity needs) is one
// line and exit 2. The venv's onnxruntime wheel (1.31.1 here) is the other
// ORT; its tests skip with a reason where the wheel is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "e2e_util.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using e2e::ReadJson;

// The onnxruntime wheel's library in this checkout's venv
// (site-packages/onnxruntime/capi/libonnxruntime.so.X.Y.Z); empty when absent.
fs::path WheelOrt() {
  const fs::path lib = fs::path(PARITY_PYTHON).parent_path().parent_path() / "lib";
  std::error_code ec;
  for (const auto& py : fs::directory_iterator(lib, ec))
    for (const auto& f : fs::directory_iterator(py.path() / "site-packages/onnxruntime/capi", ec))
      if (f.path().filename().string().starts_with("libonnxruntime.so.")) return f.path();
  return {};
}

// "1.31.1" from "libonnxruntime.so.1.31.1": what the wheel's file says it is.
std::string VersionInName(const fs::path& lib) {
  return lib.filename().string().substr(std::string("libonnxruntime.so.").size());
}

std::string Canonical(const fs::path& p) { return fs::canonical(p).string(); }

// A real shared library that is not an ORT: zlib, which every build here links.
fs::path Zlib() {
  for (const char* p : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib64/libz.so.1",
                        "/usr/lib/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1"})
    if (fs::exists(p)) return p;
  return {};
}

class OrtLibrary : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(ConvBnRelu().Save(dir_.path() / "m.onnx").has_value()); }
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }
  // `parity env` and `parity run` with --ort-library `lib`, and `parity env`
  // with PARITY_ORT_LIBRARY=`lib`: each one line on stderr containing
  // `expected`, exit 2, and nothing written.
  void ExpectRefused(const std::string& lib, const std::string& expected) {
    for (const auto& r : {e2e::RunParity({"env", "--ort-library", lib}),
                          e2e::RunParity({"run", Path("m.onnx"), "--inputs", Path("none.npz"), "-o", Path("o.npz"),
                                          "--ort-library", lib}),
                          e2e::RunProgram({"env", "PARITY_ORT_LIBRARY=" + lib, PARITY_BINARY, "env"})}) {
      EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
      EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(lib), std::string::npos) << "the message names the file: " << r.err;
      EXPECT_EQ(r.out, "");
    }
    EXPECT_FALSE(fs::exists(Path("o.npz")));
  }
  e2e::TempDir dir_{"parity_ortlib"};
};

TEST_F(OrtLibrary, EnvSaysTheBundledOrtByDefault) {
  auto r = e2e::RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "env", "--json", Path("env.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto env = ReadJson(Path("env.json"))["env"];
  EXPECT_EQ(env["ort_origin"], "bundled");
  EXPECT_TRUE(std::regex_match(env["ort_version"].get<std::string>(), std::regex(R"(1\.\d+\.\d+)")))
      << env["ort_version"];
  ASSERT_TRUE(fs::exists(env["ort_library"].get<std::string>())) << env.dump();
  EXPECT_NE(r.out.find("onnxruntime   " + env["ort_version"].get<std::string>() + " (" +
                       env["ort_library"].get<std::string>() + ")"),
            std::string::npos)
      << r.out;
  // The bundled library named explicitly is the same ORT.
  auto again = e2e::RunParity({"env", "--ort-library", env["ort_library"].get<std::string>()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

// The bundled ORT's POSIX telemetry would leave $TMPDIR/mat-debug-<pid>.log
// (/tmp without TMPDIR) behind every parity process, and a cache under
// ~/.cache: parity turns it off unless the user chose (ORT_DISABLE_TELEMETRY=0
// keeps ORT's default, the control that shows the file is ORT's). Each run
// gets a TMPDIR of its own (CI sets TMPDIR elsewhere); /tmp is looked at too.
// Where the control leaves no log (ORT's telemetry writes none on this
// machine) there is nothing to show, and the test says so. `exec` keeps the
// shell's pid.
TEST(OrtTelemetry, IsOffUnlessTheUserAsksForIt) {
  e2e::TempDir tmp{"parity_telemetry"};
  // The logs a run of `parity env` under `env` left: in its TMPDIR, in /tmp.
  auto logs_of = [&](const std::string& name, const std::string& env) {
    const fs::path dir = tmp / name;
    fs::create_directories(dir);
    auto r = e2e::RunProgram({"sh", "-c",
                              "env " + env + " TMPDIR='" + dir.string() + "'" +
                                  " sh -c 'echo $$; exec \"$0\" env > /dev/null' " PARITY_BINARY});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string file = "mat-debug-" + r.out.substr(0, r.out.find('\n')) + ".log";
    std::vector<fs::path> found;
    for (const fs::path& d : {dir, fs::path("/tmp")})
      if (fs::exists(d / file)) found.push_back(d / file);
    return found;
  };
  const auto control = logs_of("on", "ORT_DISABLE_TELEMETRY=0");
  std::error_code ec;
  for (const auto& log : control) fs::remove(log, ec);
  if (control.empty()) GTEST_SKIP() << "with ORT_DISABLE_TELEMETRY=0 the pinned ORT left no telemetry log here";
  EXPECT_EQ(logs_of("off", "-u ORT_DISABLE_TELEMETRY"), std::vector<fs::path>{});
}

TEST_F(OrtLibrary, AMissingPathIsRefused) { ExpectRefused(Path("nonexistent/libonnxruntime.so"), "no such file"); }

TEST_F(OrtLibrary, ATextFileIsRefused) {
  std::ofstream(Path("libonnxruntime.so.1")) << "not a library\n";
  ExpectRefused(Path("libonnxruntime.so.1"), "not a shared library");
}

TEST_F(OrtLibrary, ASharedLibraryThatIsNoOrtIsRefused) {
  const fs::path z = Zlib();
  if (z.empty()) GTEST_SKIP() << "no libz.so.1 in the usual places";
  ExpectRefused(z.string(), "not an ONNX Runtime library (it has no OrtGetApiBase)");
}

TEST_F(OrtLibrary, AnOrtOlderThanTheApiParityNeedsIsRefused) {
  // tests/fixtures/old_ort_abi.cc: the entry point of an ORT 1.16.3.
  ExpectRefused(PARITY_OLD_ORT_FIXTURE, "ONNX Runtime 1.16.3 is older than parity needs (C API version");
}

TEST_F(OrtLibrary, TheWheelsOrtRunsEveryCommandAndEveryReportSaysWhichRan) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "the venv has no onnxruntime wheel (site-packages/onnxruntime/capi)";
  const std::string version = VersionInName(wheel), lib = wheel.string(), file = Canonical(wheel);
  const std::string line = "onnxruntime " + version + " (" + file + ")";

  auto env = e2e::RunParity({"env", "--ort-library", lib, "--json", Path("env.json")});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(ReadJson(Path("env.json"))["env"]["ort_version"], version);
  EXPECT_EQ(ReadJson(Path("env.json"))["env"]["ort_library"], file);
  EXPECT_EQ(ReadJson(Path("env.json"))["env"]["ort_origin"], "--ort-library");

  auto inputs = e2e::RunParity({"inputs", Path("m.onnx"), "--kind", "typical", "-o", Path("in.npz")});
  ASSERT_EQ(inputs.exit_code, 0) << inputs.err;
  auto run = e2e::RunParity({"run", Path("m.onnx"), "--inputs", Path("in.npz"), "-o", Path("out.npz"),
                             "--ort-library", lib});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(line), std::string::npos) << run.out;

  auto baseline = e2e::RunParity({"baseline", Path("m.onnx"), "--inputs", Path("in.npz"), "-o", Path("bl"),
                                  "--ort-library", lib});
  ASSERT_EQ(baseline.exit_code, 0) << baseline.err;
  const auto manifest = ReadJson(Path("bl/manifest.json"));
  EXPECT_EQ(manifest["ort_version"], version);
  EXPECT_EQ(manifest["env"]["ort_library"], file);

  auto check = e2e::RunParity({"check", Path("m.onnx"), "--ort-library", lib, "--json", Path("c.json")});
  EXPECT_NE(check.exit_code, 2) << check.err;
  EXPECT_NE(check.exit_code, 3) << check.err;
  EXPECT_EQ(ReadJson(Path("c.json"))["env"]["ort_version"], version);
  EXPECT_EQ(ReadJson(Path("c.json"))["env"]["ort_library"], file);
  EXPECT_NE(check.out.find(line), std::string::npos) << check.out;

  auto bench = e2e::RunParity({"bench", Path("m.onnx"), "--runs", "3", "--warmup", "1", "--ort-library", lib,
                               "--json", Path("b.json")});
  EXPECT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_EQ(ReadJson(Path("b.json"))["ort"]["version"], version);
  EXPECT_EQ(ReadJson(Path("b.json"))["ort"]["library"], file);
  EXPECT_NE(bench.out.find(line), std::string::npos) << bench.out;

  auto locate = e2e::RunParity({"locate", Path("m.onnx"), "--ort-library", lib, "--json", Path("l.json")});
  EXPECT_NE(locate.exit_code, 2) << locate.err;
  EXPECT_NE(locate.exit_code, 3) << locate.err;
  EXPECT_EQ(ReadJson(Path("l.json"))["ort"]["version"], version);
  EXPECT_EQ(ReadJson(Path("l.json"))["ort"]["origin"], "--ort-library");
  EXPECT_NE(locate.out.find("onnxruntime: " + version + " (" + file + ")"), std::string::npos) << locate.out;

  // PARITY_ORT_LIBRARY is the same choice for a whole environment.
  auto by_env = e2e::RunProgram({"env", "PARITY_ORT_LIBRARY=" + lib, PARITY_BINARY, "run", Path("m.onnx"),
                                 "--inputs", Path("in.npz"), "-o", Path("out2.npz")});
  EXPECT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_NE(by_env.out.find(line), std::string::npos) << by_env.out;
}

TEST_F(OrtLibrary, ThePluginEpRegistersIntoTheWheelsOrtToo) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "the venv has no onnxruntime wheel (site-packages/onnxruntime/capi)";
  auto env = e2e::RunParity({"env", "--ort-library", wheel.string()});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  if (env.out.find("OpenVINOExecutionProvider") == std::string::npos)
    GTEST_SKIP() << "no OpenVINO plugin found (not installed, or PARITY_EP_DISCOVERY=0 as under ASan)";
  auto check = e2e::RunParity({"check", Path("m.onnx"), "--providers", "openvino", "--ort-library", wheel.string(),
                               "--json", Path("c.json")});
  EXPECT_NE(check.exit_code, 2) << check.err;
  EXPECT_NE(check.exit_code, 3) << check.err;
  const auto j = ReadJson(Path("c.json"));
  EXPECT_EQ(j["env"]["ort_version"], VersionInName(wheel));
  ASSERT_FALSE(j["target_assignment"].empty()) << j.dump();
  EXPECT_EQ(j["target_assignment"][0]["ep"], "OpenVINOExecutionProvider") << j["target_assignment"].dump();
}

TEST_F(OrtLibrary, TheFlagWinsOverTheEnvironment) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "the venv has no onnxruntime wheel (site-packages/onnxruntime/capi)";
  auto r = e2e::RunProgram({"env", "PARITY_ORT_LIBRARY=" + Path("nonexistent.so"), PARITY_BINARY, "env",
                            "--ort-library", wheel.string(), "--json", Path("env.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadJson(Path("env.json"))["env"]["ort_version"], VersionInName(wheel));
}

}  // namespace
}  // namespace parity
