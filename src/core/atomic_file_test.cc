#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/io_test_util.h"

namespace parity {
namespace {

using testing::ListDir;
using testing::ReadFileString;
using testing::TempDir;

TEST(WriteFileAtomic, CreatesAndReplacesWholeFiles) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "f", std::string_view("first")).has_value());
  EXPECT_EQ(ReadFileString(dir / "f"), "first");
  ASSERT_TRUE(WriteFileAtomic(dir / "f", std::string_view("second, longer")).has_value());
  EXPECT_EQ(ReadFileString(dir / "f"), "second, longer");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"f"});
}

TEST(AtomicFile, WritesToATempFileNextToTheTargetUntilCommit) {
  TempDir dir;
  testing::WriteFileString(dir / "f", "old");
  auto file = AtomicFile::Create(dir / "f");
  ASSERT_TRUE(file.has_value()) << file.error().message();
  const std::string temp = file->temp_path().filename().string();
  EXPECT_TRUE(temp.starts_with("f.tmp." + std::to_string(::getpid()) + ".")) << temp;
  ASSERT_TRUE(file->Write(std::string_view("new")).has_value());
  EXPECT_EQ(ReadFileString(dir / "f"), "old");
  ASSERT_TRUE(file->Commit().has_value());
  EXPECT_EQ(ReadFileString(dir / "f"), "new");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"f"});
}

TEST(AtomicFile, DestructorRemovesUncommittedTempFile) {
  TempDir dir;
  testing::WriteFileString(dir / "f", "old");
  {
    auto file = AtomicFile::Create(dir / "f");
    ASSERT_TRUE(file.has_value());
    ASSERT_TRUE(file->Write(std::string_view("partial")).has_value());
    EXPECT_EQ(ListDir(dir.path()).size(), 2u);
    AtomicFile moved = std::move(*file);  // ownership moves; only one removal
  }
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"f"});
  EXPECT_EQ(ReadFileString(dir / "f"), "old");
}

TEST(AtomicFile, RemovePendingTempFilesUnlinksLiveTempFiles) {
  TempDir dir;
  auto a = AtomicFile::Create(dir / "a");
  auto b = AtomicFile::Create(dir / "b");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(ListDir(dir.path()).size(), 2u);
  RemovePendingTempFiles();
  EXPECT_TRUE(ListDir(dir.path()).empty());
  auto commit = a->Commit();  // its temp file is gone, so the rename fails
  ASSERT_FALSE(commit.has_value());
  EXPECT_TRUE(commit.error().message().starts_with((dir / "a").string() + ": ")) << commit.error().message();
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(AtomicFile, CommittedFilesAreNotRemovedByTheSignalPath) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "kept", std::string_view("x")).has_value());
  RemovePendingTempFiles();
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"kept"});
}

void OnTerm(int) {
  RemovePendingTempFiles();
  ::_exit(0);
}

TEST(AtomicFile, SignalHandlerLeavesNoTempFileBehind) {
  TempDir dir;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct sigaction sa {};
    sa.sa_handler = OnTerm;
    ::sigaction(SIGTERM, &sa, nullptr);
    auto file = AtomicFile::Create(dir / "out");
    if (!file || !file->Write(std::string_view("half written"))) ::_exit(2);
    ::raise(SIGTERM);
    ::_exit(3);  // not reached: the handler exits
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(AtomicFile, MissingDirectoryIsNotFoundNamingThePath) {
  TempDir dir;
  auto file = AtomicFile::Create(dir / "missing" / "f");
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(file.error().message().starts_with((dir / "missing" / "f").string() + ": "));
}

TEST(AtomicFile, ManyConcurrentFilesBeyondTheRegistryStillWork) {
  TempDir dir;
  constexpr int kFiles = 100;  // more than the registry's 64 slots (kMaxPending, atomic_file.cc)
  std::vector<AtomicFile> files;
  for (int i = 0; i < kFiles; ++i) {
    auto f = AtomicFile::Create(dir / std::to_string(i));
    ASSERT_TRUE(f.has_value());
    files.push_back(std::move(*f));
  }
  for (auto& f : files) ASSERT_TRUE(f.Commit().has_value());
  EXPECT_EQ(ListDir(dir.path()).size(), size_t{kFiles});
}

}  // namespace
}  // namespace parity
