#include "core/json_out.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/testing/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFffd = "\xEF\xBF\xBD";  // U+FFFD, docs/report.md

TEST(JsonOut, NonUtf8NameBecomesReplacementCharacterNotThrow) {
  const json j = {{"inputs", {{{"name", "in\xff\xfe"}}}}};
  std::string text;
  ASSERT_NO_THROW(text = ToJsonText(j));
  EXPECT_EQ(text, std::string("{\"inputs\":[{\"name\":\"in") + kFffd + kFffd + "\"}]}");
  // What it wrote is valid JSON that reads back.
  EXPECT_EQ(json::parse(text)["inputs"][0]["name"], std::string("in") + kFffd + kFffd);
}

TEST(JsonOut, OrderedDocumentsKeepTheirOrderAndThePolicy) {
  nlohmann::ordered_json j;
  j["z"] = "\xff";
  j["a"] = 1;
  EXPECT_EQ(ToJsonText(j), std::string("{\"z\":\"") + kFffd + "\",\"a\":1}");
}

TEST(JsonOut, IndentAndValidUtf8PassUnchanged) {
  const json j = {{"name", "caf\xC3\xA9"}};
  EXPECT_EQ(ToJsonText(j, 2), "{\n  \"name\": \"caf\xC3\xA9\"\n}");
  EXPECT_EQ(ToJsonText(json(nullptr)), "null");
}

TEST(JsonOut, WriteJsonFileWritesPrettyTextAndNewline) {
  const testing::TempDir dir("parity_json_out");
  const fs::path file = dir / "r.json";
  ASSERT_TRUE(WriteJsonFile(file, json{{"name", "x\xff"}}));
  std::ifstream in(file, std::ios::binary);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(text, std::string("{\n  \"name\": \"x") + kFffd + "\"\n}\n");
}

TEST(JsonOut, WriteJsonFileIntoMissingFolderFailsNamingThePath) {
  const testing::TempDir dir("parity_json_out");
  const fs::path file = dir / "missing" / "r.json";
  auto s = WriteJsonFile(file, json::object());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(s.error().message().find(file.string()), std::string::npos);
}

}  // namespace
}  // namespace parity
