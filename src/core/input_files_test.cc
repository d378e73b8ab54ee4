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

// locate asks ORT for a temp model, reads it back and writes it again.
TEST(InputFiles, AFileTheCommandWroteItselfMayBeReadAndRewritten) {
  TempDir dir;
  const InputTracking scope;
  ASSERT_TRUE(WriteFileAtomic(dir / "ablate_0.onnx", "first"));
  ASSERT_TRUE(ReadRegularFile(dir / "ablate_0.onnx", 1024));
  EXPECT_TRUE(WriteFileAtomic(dir / "ablate_0.onnx", "second"));
  EXPECT_EQ(Slurp(dir / "ablate_0.onnx"), "second");
}

TEST(InputFiles, NothingIsRecordedOutsideAScope) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "a.json", "1"));
  ASSERT_TRUE(ReadRegularFile(dir / "a.json", 1024));
  {
    const InputTracking scope;  // starts empty: the read above was before it
    ASSERT_TRUE(WriteFileAtomic(dir / "b.json", "x"));
    EXPECT_TRUE(WriteFileAtomic(dir / "a.json", "2"));
    ASSERT_TRUE(ReadRegularFile(dir / "b.json", 1024));  // its own output: not an input
    EXPECT_TRUE(WriteFileAtomic(dir / "b.json", "y"));
  }
  EXPECT_TRUE(WriteFileAtomic(dir / "a.json", "4")) << "the record ends with the scope";
  EXPECT_EQ(Slurp(dir / "a.json"), "4");
  const InputTracking again;  // a new scope: a.json read now is an input
  ASSERT_TRUE(ReadRegularFile(dir / "a.json", 1024));
  EXPECT_FALSE(WriteFileAtomic(dir / "a.json", "5"));
}

}  // namespace
}  // namespace parity
