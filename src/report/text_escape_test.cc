#include "report/text_escape.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(TextEscape, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(TextEscape, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(SanitizeUtf8("a\xff"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

TEST(TextEscape, XmlKeepsWhitespaceAndDropsForbiddenControls) {
  EXPECT_EQ(XmlEscape("a\tb\nc\x01"
                      "d&'"),
            "a&#9;b&#10;c\xEF\xBF\xBD"
            "d&amp;&apos;");
}

TEST(TextEscape, JsonForScriptCannotCloseTheElement) {
  const nlohmann::json j = {{"name", "</script><!-- & -->"}};
  const std::string s = JsonForScript(j);
  EXPECT_EQ(s.find('<'), std::string::npos);
  EXPECT_EQ(s.find('>'), std::string::npos);
  EXPECT_EQ(s.find('&'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(s), j);
}

}  // namespace
}  // namespace parity
