// A folder written whole or not at all (issue 29, probe 4).
#include "core/staged_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/io_test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::ListDir;
using testing::ReadFileString;
using testing::TempDir;
using testing::WriteFileString;

TEST(StagedDir, NothingIsVisibleAtTheTargetUntilCommit) {
  TempDir dir;
  auto staged = StagedDir::Create(dir / "out");
  ASSERT_TRUE(staged) << staged.error().message();
  EXPECT_EQ(staged->path().parent_path(), dir.path());
  WriteFileString(staged->path() / "a.npy", "a");
  EXPECT_FALSE(fs::exists(dir / "out"));
  ASSERT_TRUE(staged->Commit(false));
  EXPECT_EQ(ReadFileString(dir / "out" / "a.npy"), "a");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out"});
}

// Files inside the folder are not fsynced one by one (Sync::kByFolder):
// Commit flushes the folder once; each is whole and in place after it.
TEST(StagedDir, FilesSyncedByTheFolderAreWholeAfterCommit) {
  TempDir dir;
  auto staged = StagedDir::Create(dir / "out");
  ASSERT_TRUE(staged);
  fs::create_directories(staged->path() / "s0");
  ASSERT_TRUE(WriteFileAtomic(staged->path() / "s0" / "a.npy", std::string_view("aaaa"), Sync::kByFolder));
  auto file = AtomicFile::Create(staged->path() / "manifest.json", Sync::kByFolder);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->Write(std::string_view("{}")));
  ASSERT_TRUE(file->Commit());
  ASSERT_TRUE(staged->Commit(false));
  EXPECT_EQ(ReadFileString(dir / "out" / "s0" / "a.npy"), "aaaa");
  EXPECT_EQ(ReadFileString(dir / "out" / "manifest.json"), "{}");
  EXPECT_EQ(ListDir(dir / "out"), (std::vector<std::string>{"manifest.json", "s0"}));
  EXPECT_EQ(ListDir(dir / "out" / "s0"), std::vector<std::string>{"a.npy"});
}

// A staging folder that cannot be flushed (here: gone) is an error naming the
// target, and the target is left as it was.
TEST(StagedDir, AFolderThatCannotBeFlushedIsNotPutInPlace) {
  TempDir dir;
  fs::create_directories(dir / "out");
  WriteFileString(dir / "out" / "old.npy", "old");
  auto staged = StagedDir::Create(dir / "out");
  ASSERT_TRUE(staged);
  fs::remove_all(staged->path());
  auto s = staged->Commit(true);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("cannot flush the staging folder"), std::string::npos) << s.error().message();
  EXPECT_EQ(ListDir(dir / "out"), std::vector<std::string>{"old.npy"});
}

TEST(StagedDir, AnUncommittedFolderIsRemovedAndTheOldTargetKept) {
  TempDir dir;
  fs::create_directories(dir / "out");
  WriteFileString(dir / "out" / "old.npy", "old");
  {
    auto staged = StagedDir::Create(dir / "out");
    ASSERT_TRUE(staged);
    fs::create_directories(staged->path() / "s1");
    WriteFileString(staged->path() / "s1" / "x.npy", "new");
  }
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out"});
  EXPECT_EQ(ListDir(dir / "out"), std::vector<std::string>{"old.npy"});
}

TEST(StagedDir, ReplacingANonEmptyTargetNeedsReplaceAndSwapsWhole) {
  TempDir dir;
  fs::create_directories(dir / "out" / "s0");
  WriteFileString(dir / "out" / "s0" / "old.npy", "old");
  auto staged = StagedDir::Create(dir / "out/");
  ASSERT_TRUE(staged);
  WriteFileString(staged->path() / "new.npy", "new");
  EXPECT_FALSE(staged->Commit(false));
  EXPECT_EQ(ListDir(dir / "out"), std::vector<std::string>{"s0"});
  auto again = StagedDir::Create(dir / "out");
  ASSERT_TRUE(again);
  WriteFileString(again->path() / "new.npy", "new");
  ASSERT_TRUE(again->Commit(true));
  EXPECT_EQ(ListDir(dir / "out"), std::vector<std::string>{"new.npy"});
}

TEST(StagedDir, TheSignalPathRemovesNestedStagingFolders) {
  TempDir dir;
  auto staged = StagedDir::Create(dir / "out");
  ASSERT_TRUE(staged);
  fs::create_directories(staged->path() / "a" / "b");
  for (int i = 0; i < 300; ++i) WriteFileString(staged->path() / "a" / fmt::format("f{}.npy", i), "x");
  WriteFileString(staged->path() / "a" / "b" / "deep.npy", "x");
  fs::create_symlink(dir.path(), staged->path() / "link");  // removed as a link, never followed
  RemovePendingStagedDirs();
  EXPECT_FALSE(fs::exists(staged->path()));
  EXPECT_TRUE(fs::exists(dir.path()));
}

}  // namespace
}  // namespace parity
