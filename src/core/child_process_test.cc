#include "core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>

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

// A program that cannot be executed is an error of the start naming it and
// why, not a child that exits 127 later; the same in every form.
TEST(ChildProcess, AProgramThatCannotRunIsAnErrorNamingIt) {
  auto missing = ChildProcess::Start({"/no/such/program", "x"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kRuntime);
  EXPECT_NE(missing.error().message().find("/no/such/program"), std::string::npos) << missing.error().message();
  EXPECT_NE(missing.error().message().find("No such file"), std::string::npos) << missing.error().message();
  auto not_on_path = ChildProcess::Start({"parity-no-such-program"}, {.search_path = true});
  ASSERT_FALSE(not_on_path.has_value());
  auto directory = RunInForeground({"/tmp"}, {}, /*stdout_to_stderr=*/false);
  ASSERT_FALSE(directory.has_value());
  EXPECT_NE(directory.error().message().find("/tmp"), std::string::npos) << directory.error().message();
  auto in_place = ExecInPlace({"/no/such/program"}, {});
  ASSERT_FALSE(in_place.has_value());
  EXPECT_NE(in_place.error().message().find("/no/such/program"), std::string::npos);
}

// A name is found on PATH when asked; the environment is ours with the
// given entries replaced or added; a prefix goes before the old value.
TEST(ChildProcess, FindsProgramsOnPathAndSetsTheirEnvironment) {
  ::setenv("PARITY_SPAWN_TEST", "old", 1);
  ::setenv("PARITY_SPAWN_KEPT", "kept", 1);
  auto c = ChildProcess::Start({"sh", "-c", "echo \"$PARITY_SPAWN_TEST $PARITY_SPAWN_KEPT $PARITY_SPAWN_NEW\""},
                               {.env = {PrependedEnv("PARITY_SPAWN_TEST", "/first"), "PARITY_SPAWN_NEW=new"},
                                .search_path = true});
  ASSERT_TRUE(c.has_value()) << c.error().message();
  std::string line;
  ASSERT_EQ(c->ReadLine(line, 100, Clock::now() + std::chrono::seconds(10)), ChildProcess::Got::kLine);
  EXPECT_EQ(line, "/first:old kept new");
  ::unsetenv("PARITY_SPAWN_TEST");
  EXPECT_EQ(PrependedEnv("PARITY_SPAWN_TEST", "/first"), "PARITY_SPAWN_TEST=/first");
  ::unsetenv("PARITY_SPAWN_KEPT");
}

// Stop reaps: no zombie stays, whether the child exited or was killed.
TEST(ChildProcess, StopLeavesNoZombie) {
  for (const char* script : {"exit 3", "sleep 30"}) {
    ChildProcess c = Shell(script);
    const pid_t pid = c.pid();
    const int status = c.Stop(std::chrono::milliseconds(200));
    EXPECT_NE(status, -1) << script;
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1) << script << ": still a child of ours";
    EXPECT_EQ(errno, ECHILD) << script;
  }
}

// A foreground child's exit code (128 + N for a signal), and a SIGTERM that
// reaches parity meanwhile is forwarded to it and reported.
TEST(ChildProcess, AForegroundChildsExitAndAForwardedSignal) {
  auto ran = RunInForeground({"/bin/sh", "-c", "exit 5"}, {}, /*stdout_to_stderr=*/true);
  ASSERT_TRUE(ran.has_value()) << ran.error().message();
  EXPECT_EQ(ran->code, 5);
  EXPECT_EQ(ran->interrupted, 0);
  // The child signals its parent, which forwards the signal back: the
  // child's trap exits 7 (the default would be 128 + 15).
  auto forwarded = RunInForeground({"/bin/sh", "-c", "trap 'kill $!; exit 7' TERM; kill -TERM $PPID; sleep 10 & wait"}, {},
                                   /*stdout_to_stderr=*/true);
  ASSERT_TRUE(forwarded.has_value()) << forwarded.error().message();
  EXPECT_EQ(forwarded->code, 7);
  EXPECT_EQ(forwarded->interrupted, SIGTERM);
}

}  // namespace
}  // namespace parity
