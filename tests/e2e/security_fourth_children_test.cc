// Issue 56, fourth hostile-input review: parity's child processes and
// scratch folders. Class 6: SIGINT/SIGTERM left scratch folders in TMPDIR and
// a running runner-worker child, while parity printed that no partial files
// were left. Class 7: the child's pipes were read without limits: a runtime
// library that hangs when loaded hung the parent, 1.5 GB on the child's
// stdout or stderr became 3-6 GB in the parent, and the runner-worker read a
// request line of any length.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/npz.h"
#include "e2e_models.h"
#include "e2e_util.h"
#include "engine/run/tensor_source.h"
#include "onnx/builder.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunProgram;
using e2e::TempDir;

// The binary under test: PARITY_BINARY, or PARITY_E2E_BINARY when set (to run
// these probes against an older build).
std::string Parity() {
  const char* env = std::getenv("PARITY_E2E_BINARY");
  return env != nullptr && *env != '\0' ? env : PARITY_BINARY;
}

using e2e::WheelOrt;

// What `dir` holds (names), empty when nothing.
std::vector<std::string> Entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  return out;
}

std::string Cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

// Fields of /proc/PID/stat after the command's name: state, ppid, ... utime (14), stime (15).
std::vector<std::string> StatFields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  const size_t paren = s.rfind(')');
  if (paren == std::string::npos) return out;
  std::istringstream rest(s.substr(paren + 2));
  for (std::string f; rest >> f;) out.push_back(f);
  return out;
}

// The live processes whose command line holds `needle` (zombies are dead).
std::vector<pid_t> ProcessesWith(const std::string& needle) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const auto stat = StatFields(pid);
    if (stat.empty() || stat[0] == "Z") continue;
    if (Cmdline(pid).find(needle) != std::string::npos) out.push_back(pid);
  }
  return out;
}

// A child of `parent` whose command line holds `needle`, once it has used
// `cpu_ticks` of CPU (it is at work); -1 after 60 s.
pid_t WaitForBusyChild(pid_t parent, const std::string& needle, long cpu_ticks) {
  for (int i = 0; i < 6000; ++i) {
    for (pid_t pid : ProcessesWith(needle)) {
      const auto stat = StatFields(pid);
      if (stat.size() > 12 && std::stoi(stat[1]) == parent && std::stol(stat[11]) + std::stol(stat[12]) >= cpu_ticks)
        return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// A model that keeps ORT busy for many seconds a sample, single-threaded:
// 40 MatMuls of [2048, 2048] by one shared weight (seconds a sample); 2 samples.
fs::path SlowModel(const fs::path& dir, fs::path* inputs) {
  return e2e::SlowMatMulModel(dir, 2048, 40, 2, inputs);
}

void ExpectOneErrorLine(const e2e::ProcessResult& r) {
  EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 4096u) << "a bounded message";
}

// Class 6: a two-runtime check (the reference on the venv's ORT, in a child
// `parity runner-worker`) interrupted while the child runs a sample: the
// child is killed and reaped, and TMPDIR holds no parity scratch folder.
TEST(SecurityFourthChildren, AnInterruptedTwoRuntimeCheckLeavesNoScratchFolderAndNoChild) {
  const fs::path wheel = WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv: no second runtime to run in a child";
  TempDir dir("parity_fourth_interrupt");
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  fs::path inputs;
  const fs::path model = SlowModel(dir.path(), &inputs);
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    e2e::Child c = e2e::Start({"env", "TMPDIR=" + tmp.string(), Parity(), "check", model.string(), "--inputs",
                               inputs.string(), "--reference-ort-library", wheel.string(), "--threads", "1",
                               "--no-locate"});
    ASSERT_GT(c.pid, 0);
    // `env` execs parity: the same pid. The child at work for 0.3 s is mid-sample.
    const pid_t child = WaitForBusyChild(c.pid, "runner-worker", 30);
    ASSERT_GT(child, 0) << "no runner-worker child at work";
    EXPECT_FALSE(Entries(tmp).empty()) << "the child runner's scratch folder is in TMPDIR";
    ::kill(c.pid, sig);
    // Right after parity exits (a zombie until Finish reaps it; Finish would
    // also wait for the end of its output, which a child left running may hold):
    // the child is gone, not left to finish its sample ...
    for (int i = 0; i < 3000; ++i) {
      const auto parent = StatFields(c.pid);
      if (parent.empty() || parent[0] == "Z") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const auto stat = StatFields(child);
    EXPECT_TRUE(stat.empty() || stat[0] == "Z" || Cmdline(child).find("runner-worker") == std::string::npos)
        << "the runner-worker child " << child << " still runs (state " << (stat.empty() ? "" : stat[0]) << ")";
    for (pid_t pid : ProcessesWith(tmp.string())) ::kill(pid, SIGKILL);  // never leave one behind
    const auto r = e2e::Finish(c);
    EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
    EXPECT_NE(r.err.find("no partial files left"), std::string::npos) << r.err;
    // ... and nothing of parity's is left in TMPDIR.
    EXPECT_TRUE(Entries(tmp).empty()) << "left in TMPDIR: " << ::testing::PrintToString(Entries(tmp));
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(tmp, ec)) fs::remove_all(e.path(), ec);
  }
}

// Class 7: a runtime library that never returns from its load. The child
// that loads it has a deadline to say it is ready (PARITY_RUNNER_START_TIMEOUT,
// 60 s by default): then it is killed, and the check ends with one line,
// exit 2 (a broken library is the user's input), nothing left in TMPDIR.
TEST(SecurityFourthChildren, ALibraryThatHangsAtLoadEndsWithinTheStartDeadline) {
  TempDir dir("parity_fourth_hang");
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  ASSERT_TRUE(e2e::AddReluModel().Save(dir / "m.onnx"));
  const auto r = RunProgram({"timeout", "-s", "KILL", "60", "env", "TMPDIR=" + tmp.string(),
                             "PARITY_HOSTILE_LIBRARY=hang", "PARITY_RUNNER_START_TIMEOUT=2", Parity(), "check",
                             (dir / "m.onnx").string(), "--reference-ort-library", PARITY_HOSTILE_FIXTURE});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectOneErrorLine(r);
  EXPECT_NE(r.err.find("did not say it was ready within 2 s"), std::string::npos) << r.err;
  EXPECT_LT(r.wall_seconds, 30);
  const auto left = ProcessesWith(tmp.string());
  EXPECT_TRUE(left.empty()) << "the hanging child was left running";
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  EXPECT_TRUE(Entries(tmp).empty()) << "left in TMPDIR: " << ::testing::PrintToString(Entries(tmp));
}

// Class 7: a library that writes 300 MB without a newline on the child's
// stdout, or on its stderr, then exits. The parent reads at most a reply's
// length of stdout (64 KiB) and keeps a 64 KiB tail of stderr: exit 2, one
// short line, and the parent's memory stays small.
TEST(SecurityFourthChildren, AChildThatFloodsItsStdoutOrStderrCostsTheParentABoundedTail) {
  TempDir dir("parity_fourth_flood");
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  ASSERT_TRUE(e2e::AddReluModel().Save(dir / "m.onnx"));
  for (const std::string& stream : {std::string("stdout"), std::string("stderr")}) {
    SCOPED_TRACE(stream);
    const auto r = RunProgram({"timeout", "-s", "KILL", "120", "env", "TMPDIR=" + tmp.string(),
                               "PARITY_HOSTILE_LIBRARY=" + stream, "PARITY_HOSTILE_BYTES=300000000", Parity(),
                               "check", (dir / "m.onnx").string(), "--reference-ort-library",
                               PARITY_HOSTILE_FIXTURE});
    EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
    ExpectOneErrorLine(r);
    EXPECT_NE(r.err.find("runtime library '"), std::string::npos) << r.err.substr(0, 2000);
    if (!e2e::kSanitized) EXPECT_LT(r.peak_rss_bytes, 200ll << 20) << "the parent held the flood";
    EXPECT_TRUE(Entries(tmp).empty()) << "left in TMPDIR: " << ::testing::PrintToString(Entries(tmp));
  }
}

// Class 7: the runner-worker's request lines are framed records of at most
// 16 KiB (core/worker_protocol.h, the one worker protocol): a 200 MB line is
// refused after 16 KiB, one line, exit 2, in bounded memory and time.
TEST(SecurityFourthChildren, ARunnerWorkerRequestLineIsBounded) {
  TempDir dir("parity_fourth_request");
  { std::ofstream(dir / "config.json") << "{}"; }
  {
    std::ofstream line(dir / "line.txt", std::ios::binary);
    const std::string block(1 << 20, 'a');
    for (int i = 0; i < 200; ++i) line << block;
    line << "\n";
  }
  const auto r = RunProgram({"sh", "-c", "exec \"$0\" runner-worker --config \"$1\" < \"$2\"", Parity(),
                             (dir / "config.json").string(), (dir / "line.txt").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  ExpectOneErrorLine(r);
  EXPECT_NE(r.err.find("request line longer than 16384 bytes"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_LT(r.cpu_seconds, 10);
  if (!e2e::kSanitized) EXPECT_LT(r.peak_rss_bytes, 200ll << 20);
  // The ready line, then nothing: no reply to what is no request.
  EXPECT_EQ(e2e::Lines(r.out).size(), 1u) << r.out.substr(0, 2000);
}

}  // namespace
}  // namespace parity
