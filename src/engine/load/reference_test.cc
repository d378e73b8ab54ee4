#include "engine/load/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity {
namespace {

using ::testing::HasSubstr;

TEST(ParseReference, TorchPrefixIsADumpJudgedUnfused) {
  auto r = ParseReference("torch:/data/dump");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->kind, Reference::Kind::kTorchDump);
  EXPECT_TRUE(r->is_torch());
  EXPECT_EQ(r->path, "/data/dump");
  EXPECT_EQ(r->config.opt_level, OptLevel::kDisable);
  EXPECT_EQ(ReferenceKindName(r->kind), "torch");
}

TEST(ParseReference, TorchPrefixWithoutDirectoryIsRefused) {
  auto r = ParseReference("torch:");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("--reference"));
}

TEST(ParseReference, LevelIsAConfig) {
  auto r = ParseReference("basic");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->kind, Reference::Kind::kConfig);
  EXPECT_EQ(r->config.opt_level, OptLevel::kBasic);
  EXPECT_TRUE(r->path.empty());
  EXPECT_EQ(ReferenceKindName(r->kind), "config");
}

TEST(ParseReference, MissingConfigFileIsAnErrorNamingTheOption) {
  auto r = ParseReference("/nonexistent/reference.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("--reference"));
  EXPECT_THAT(r.error().message(), HasSubstr("/nonexistent/reference.json"));
}

}  // namespace
}  // namespace parity
