// A command never writes over a file it read (issue 29, probe 3).
#include "core/input_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/regular_file.h"
#include "core/testing/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string Slurp(const fs::path& p) { return *ReadRegularFile(p, 1 << 20); }

TEST(InputFiles, AnOutputOverAFileReadInTheScopeIsRefusedAndTheFileKept) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "m.onnx", "model bytes"));
  const InputTracking scope;
  ASSERT_TRUE(ReadRegularFile(dir / "m.onnx", 1024));
  const Status s = WriteFileAtomic(dir / "m.onnx", "a report");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message().find("never overwrites its inputs"), std::string::npos) << s.error().message();
  EXPECT_EQ(Slurp(dir / "m.onnx"), "model bytes");
  EXPECT_TRUE(WriteFileAtomic(dir / "other.json", "{}")) << "another file is written";
}

TEST(InputFiles, ASymlinkOrAHardLinkToAnInputIsTheSameFile) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "x.npy", "input"));
  fs::create_symlink(dir / "x.npy", dir / "soft.json");
  ASSERT_EQ(::link((dir / "x.npy").c_str(), (dir / "hard.json").c_str()), 0);
  const InputTracking scope;
  ASSERT_TRUE(ReadRegularFile(dir / "x.npy", 1024));
  for (const char* name : {"soft.json", "hard.json"}) {
    const Status s = WriteFileAtomic(dir / name, "output");
    ASSERT_FALSE(s) << name;
    EXPECT_NE(s.error().message().find("the same file, by a link"), std::string::npos) << s.error().message();
  }
  EXPECT_EQ(Slurp(dir / "x.npy"), "input");
  EXPECT_TRUE(fs::is_symlink(dir / "soft.json"));
}

TEST(InputFiles, NothingIsRecordedOutsideAScope) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "a.json", "1"));
  ASSERT_TRUE(ReadRegularFile(dir / "a.json", 1024));
  {
    const InputTracking scope;  // starts empty: the read above was before it
    EXPECT_TRUE(WriteFileAtomic(dir / "a.json", "2"));
    ASSERT_TRUE(ReadRegularFile(dir / "a.json", 1024));
    EXPECT_FALSE(WriteFileAtomic(dir / "a.json", "3"));
  }
  EXPECT_TRUE(WriteFileAtomic(dir / "a.json", "4")) << "the record ends with the scope";
  EXPECT_EQ(Slurp(dir / "a.json"), "4");
}

}  // namespace
}  // namespace parity
