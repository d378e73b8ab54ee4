// A model's bytes mapped in place of a copy (issue 26): the same bytes as a
// read, the same refusals, and a registry a SIGBUS handler can search.
#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "core/io_test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFileString;

TEST(MappedFile, ALargeFileIsMappedAndItsAddressesAreRegistered) {
  TempDir dir;
  std::string content(3u << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  WriteFileString(dir / "big.onnx", content);
  const void* inside = nullptr;
  {
    auto m = MappedFile::Open(dir / "big.onnx", int64_t{1} << 31);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->mapped());
    EXPECT_EQ(m->bytes(), content);
    inside = m->bytes().data() + 12345;
    const char* path = MappedFileAt(inside);
    ASSERT_NE(path, nullptr);
    EXPECT_EQ(std::string(path), (dir / "big.onnx").string());
    EXPECT_EQ(MappedFileAt(content.data()), nullptr);  // not a mapping
  }
  EXPECT_EQ(MappedFileAt(inside), nullptr);  // unmapped, unregistered
}

TEST(MappedFile, ASmallFileIsReadAndTheLimitsAreThoseOfARead) {
  TempDir dir;
  WriteFileString(dir / "small.onnx", "abc");
  auto small = MappedFile::Open(dir / "small.onnx", 100);
  ASSERT_TRUE(small);
  EXPECT_FALSE(small->mapped());
  EXPECT_EQ(small->bytes(), "abc");
  auto over = MappedFile::Open(dir / "small.onnx", 2);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message().find("more than the limit of 2 bytes"), std::string::npos);
  auto missing = MappedFile::Open(dir / "none.onnx", 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  auto fifo = MappedFile::Open(dir / "fifo", 100);  // refused without blocking
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message().find("a FIFO"), std::string::npos) << fifo.error().message();
}

}  // namespace
}  // namespace parity
