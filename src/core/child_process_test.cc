#include "core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "core/scratch_dir.h"

namespace parity {
namespace {

using Clock = ChildProcess::Clock;

ChildProcess Shell(const std::string& script) {
  auto c = ChildProcess::Start({"/bin/sh", "-c", script});
  EXPECT_TRUE(c.has_value()) << c.error().message();
  return std::move(*c);
}

TEST(ChildProcess, ReadsLinesAndAnswersRequests) {
  ChildProcess c = Shell("echo ready; while read x; do echo \"got $x\"; done");
  std::string line;
  ASSERT_EQ(c.ReadLine(line, 100, Clock::now() + std::chrono::seconds(10)), ChildProcess::Got::kLine);
  EXPECT_EQ(line, "ready");
  ASSERT_TRUE(c.Send("a b\n"));
  ASSERT_EQ(c.ReadLine(line, 100), ChildProcess::Got::kLine);
  EXPECT_EQ(line, "got a b");
  const int status = c.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A child that never answers is given up at the deadline; one that writes
// without a newline is refused once the bound is passed, whatever it writes.
TEST(ChildProcess, ADeadlineAndALineBoundHoldWhateverTheChildDoes) {
  ChildProcess silent = Shell("sleep 30");
  std::string line;
  const auto start = Clock::now();
  EXPECT_EQ(silent.ReadLine(line, 100, Clock::now() + std::chrono::milliseconds(300)), ChildProcess::Got::kTimeout);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  silent.Stop(std::chrono::milliseconds(0));  // killed, not waited for 30 s
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));

  ChildProcess flood = Shell("yes x | tr -d '\\n'");
  EXPECT_EQ(flood.ReadLine(line, 4096, Clock::now() + std::chrono::seconds(10)), ChildProcess::Got::kTooLong);
  EXPECT_TRUE(line.empty());
}

// Its stderr is drained while the parent waits (a child writing much there
// never blocks), and only its tail is kept; its last line is its last words.
TEST(ChildProcess, KeepsABoundedTailOfStderr) {
  ChildProcess c = Shell("head -c 3000000 /dev/zero | tr '\\0' e >&2; echo >&2; echo 'parity: error: the end' >&2; echo out");
  std::string line;
  ASSERT_EQ(c.ReadLine(line, 100, Clock::now() + std::chrono::seconds(20)), ChildProcess::Got::kLine);
  EXPECT_EQ(line, "out");
  EXPECT_EQ(c.ReadLine(line, 100, Clock::now() + std::chrono::seconds(20)), ChildProcess::Got::kEnd);
  EXPECT_EQ(c.LastWords(), "the end");  // "parity: error: " is ours to add back
}

// The signal handler's part: every registered child is killed and reaped,
// every registered scratch folder removed with what it holds.
TEST(ChildProcess, PendingChildrenAreKilledAndScratchFoldersRemoved) {
  ChildProcess c = Shell("sleep 30");
  const pid_t pid = c.pid();
  auto scratch = ScratchDir::Create("child_test");
  ASSERT_TRUE(scratch.has_value());
  std::filesystem::create_directories(scratch->path() / "job0" / "deeper");
  std::ofstream(scratch->path() / "job0" / "deeper" / "x.npz") << "x";
  KillPendingChildren();
  RemovePendingScratchDirs();
  EXPECT_NE(::kill(pid, 0), 0) << "the child is still there (or a zombie)";
  EXPECT_FALSE(std::filesystem::exists(scratch->path()));
}

}  // namespace
}  // namespace parity
