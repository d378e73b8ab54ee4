#include "core/py_literal.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(PyLiteral, ParsesTheDynamoExportersScopeList) {
  auto v = ParsePyStringList("['', 'layer1', 'layer1.0', 'layer1.0.bn1', '_native_batch_norm_legit_no_training_1']");
  ASSERT_TRUE(v.has_value()) << v.error().message();
  EXPECT_EQ(*v, (std::vector<std::string>{"", "layer1", "layer1.0", "layer1.0.bn1",
                                          "_native_batch_norm_legit_no_training_1"}));
}

TEST(PyLiteral, StringsTakeReprsEscapesAndBothQuotes) {
  auto v = ParsePyStringList(R"(["it's", 'a\'b', 'tab\there', 'nl\n', '\x41'])");
  ASSERT_TRUE(v.has_value()) << v.error().message();
  EXPECT_EQ(*v, (std::vector<std::string>{"it's", "a'b", "tab\there", "nl\n", "A"}));
}

TEST(PyLiteral, RefusesWhatIsNotAStringList) {
  for (const char* bad : {"", "[", "['a'", "['a' 'b']", "[1, 'a']", "{'a': 1}", "'a'", "['\\q']", "['\\x4']",
                          "['a'] junk", "__import__('os')"}) {
    SCOPED_TRACE(bad);
    auto v = ParsePyStringList(bad);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().code(), ErrorCode::kCorrupt);
  }
}

TEST(PyLiteral, ErrorsNameWhatWasParsedAndWhere) {
  auto v = ParsePyLiteral("{'a': }", "header dict");
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message().find("malformed header dict at byte"), std::string::npos) << v.error().message();
}

TEST(PyLiteral, LimitsNesting) {
  auto v = ParsePyLiteral(std::string(100, '[') + std::string(100, ']'));
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message().find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace parity
