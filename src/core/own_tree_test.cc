// Issue 46, class 8: folders of tensors follow a dump's symlink rule.
#include "core/own_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "core/testing/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(OwnTree, SymlinksBelowTheFolderAreRefusedUnlessAllowedAndTheFolderItselfMayBeOne) {
  TempDir tmp("parity_own_tree");
  fs::create_directories(tmp / "d" / "sub");
  std::ofstream(tmp / "d" / "sub" / "x.npy") << "x";
  std::ofstream(tmp / "outside.npy") << "o";
  EXPECT_TRUE(CheckOwnTree(tmp / "d", false, ""));
  fs::create_directory_symlink(tmp / "d", tmp / "link");
  EXPECT_TRUE(CheckOwnTree(tmp / "link", false, "")) << "the folder named may be a symlink";

  fs::create_symlink(tmp / "outside.npy", tmp / "d" / "sub" / "y.npy");
  auto r = CheckOwnTree(tmp / "d", false, " (--allow-symlinks follows them)");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("y.npy: a symlink"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("--allow-symlinks"), std::string::npos) << r.error().message();
  EXPECT_TRUE(CheckOwnTree(tmp / "d", true, ""));
  fs::remove(tmp / "d" / "sub" / "y.npy");

  fs::create_directory_symlink(tmp.path(), tmp / "d" / "loop");  // a cycle, followed only when allowed
  EXPECT_FALSE(CheckOwnTree(tmp / "d", false, ""));
  EXPECT_FALSE(CheckOwnTree(tmp / "d", true, "")) << "a cycle ends at the depth limit";
}

TEST(OwnTree, FifosDevicesAndDanglingLinksAreRefusedNotSkipped) {
  TempDir tmp("parity_own_tree");
  fs::create_directories(tmp / "d");
  ASSERT_EQ(::mkfifo((tmp / "d" / "f.npz").c_str(), 0600), 0);
  auto fifo = CheckOwnTree(tmp / "d", true, "");
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message().find("f.npz: a FIFO"), std::string::npos) << fifo.error().message();
  auto file = CheckOwnFile(tmp / "d" / "f.npz", true, "");
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message().find("a FIFO"), std::string::npos);
  fs::remove(tmp / "d" / "f.npz");
  fs::create_symlink("/dev/zero", tmp / "d" / "z.npy");
  EXPECT_FALSE(CheckOwnTree(tmp / "d", true, ""));
  EXPECT_FALSE(CheckOwnFile(tmp / "d" / "z.npy", true, ""));
  fs::remove(tmp / "d" / "z.npy");
  fs::create_symlink(tmp / "gone", tmp / "d" / "g.npy");
  EXPECT_FALSE(CheckOwnTree(tmp / "d", true, ""));
  EXPECT_EQ(CheckOwnFile(tmp / "nothing.npz", false, "").error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace parity
