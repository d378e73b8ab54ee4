#include "core/sha256.h"

#include <gtest/gtest.h>

#include "core/io_test_util.h"

namespace parity {
namespace {

TEST(Sha256, MatchesKnownVectors) {
  EXPECT_EQ(Sha256Hex(std::string_view("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex(std::string_view("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FileDigestEqualsSpanDigestAcrossChunkBoundaries) {
  testing::TempDir dir;
  std::string data(3 * (1 << 20) + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131);
  testing::WriteFileString(dir / "f", data);
  auto hex = Sha256FileHex(dir / "f");
  ASSERT_TRUE(hex.has_value()) << hex.error().message();
  EXPECT_EQ(*hex, Sha256Hex(data));
}

TEST(Sha256, HasherIsIncremental) {
  Sha256Hasher h;
  h.Update(std::as_bytes(std::span<const char>("ab", 2)));
  h.Update(std::as_bytes(std::span<const char>("c", 1)));
  EXPECT_EQ(DigestToHex(h.Finish()), Sha256Hex(std::string_view("abc")));
}

TEST(Sha256, MissingFileIsNotFoundNamingIt) {
  testing::TempDir dir;
  auto hex = Sha256FileHex(dir / "nope");
  ASSERT_FALSE(hex.has_value());
  EXPECT_EQ(hex.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(hex.error().message().starts_with((dir / "nope").string() + ": "));
}

}  // namespace
}  // namespace parity
