#include "report/text_escape.h"

#include <gtest/gtest.h>

#include "core/short_name.h"
#include "report/json/json_helpers.h"

namespace parity {
namespace {

TEST(TextEscape, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("caf\xC3\xA9"), "caf\xC3\xA9");
}

// Issue 29, probe 7: raw ESC bytes from node names reached report.html.
TEST(TextEscape, HtmlAndScriptJsonShowControlsNotPassThem) {
  EXPECT_EQ(HtmlEscape("a\x1b[2K\xC2\x9b" "b\tc\n"), "a\\x1b[2K\\u009bb\tc\n");
  const nlohmann::json j = {{"name", "x\x1b\xC2\x9b" "y\xC3\xA9"}};
  const std::string s = JsonForScript(j);
  EXPECT_EQ(s.find('\x1b'), std::string::npos);
  EXPECT_EQ(s.find("\xC2\x9b"), std::string::npos) << s;
  EXPECT_EQ(nlohmann::json::parse(s), j);
}

TEST(TextEscape, ConsoleNamesStayOnOneLine) {
  EXPECT_EQ(ConsoleName("a\nfirst divergence: b\r\t"), "a\\x0afirst divergence: b\\x0d\\x09");
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

// docs/security.md: model-controlled names must not draw on the terminal.
TEST(TerminalSafe, EscapesControlsAndForeignEscapesButKeepsParitysColours) {
  EXPECT_EQ(TerminalSafe("conv1\tok\n"), "conv1\tok\n");
  EXPECT_EQ(TerminalSafe("a\rFAKE PASS"), "a\\x0dFAKE PASS");
  EXPECT_EQ(TerminalSafe("x\x1b[2K\x1b[1A"), "x\\x1b[2K\\x1b[1A");
  EXPECT_EQ(TerminalSafe("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(TerminalSafe("\x7f"), "\\x7f");
  EXPECT_EQ(TerminalSafe("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xc2\xb5s"), "caf\xc3\xa9 \xc2\xb5s");  // UTF-8 text passes
  EXPECT_EQ(TerminalSafe("\x1b[31;1mFAIL\x1b[0m"), "\x1b[31;1mFAIL\x1b[0m");
}

TEST(TerminalFilter, HoldsASequenceCutBetweenTwoPieces) {
  TerminalFilter f;
  std::string out = f.Feed("ok \x1b[3");
  out += f.Feed("2mPASS\x1b");
  out += f.Feed("[2K");
  out += f.Flush();
  EXPECT_EQ(out, "ok \x1b[32mPASS\\x1b[2K");
  TerminalFilter g;
  out = g.Feed("\x1b[3");
  out += g.Flush();
  EXPECT_EQ(out, "\\x1b[3");
}

// Issue 46, class 5: a long name the process remembered is shortened in
// every medium, in a stream too where it is cut between two pieces.
TEST(TextEscape, EveryMediumShortensARememberedLongName) {
  ForgetLongNames();
  const std::string name = std::string(299, 'n') + "<";
  RememberLongName(name);
  const std::string shown = ShortName(name);
  EXPECT_EQ(HtmlEscape("a " + name), "a " + shown);
  EXPECT_EQ(XmlEscape(name + "&"), shown + "&amp;");
  EXPECT_EQ(TerminalSafe("'" + name + "'\n"), "'" + shown + "'\n");
  TerminalFilter f;
  std::string out = f.Feed("x " + name.substr(0, 100));
  out += f.Feed(name.substr(100) + " y");
  out += f.Flush();
  EXPECT_EQ(out, "x " + shown + " y");
  nlohmann::json j = {{name, {name + "_fused", 1}}};
  ShortenLongNamesIn(j);
  EXPECT_EQ(j, (nlohmann::json{{shown, {shown + "_fused", 1}}}));
  EXPECT_EQ(JsonForScript(name).find(std::string(299, 'n')), std::string::npos);
  ForgetLongNames();
  EXPECT_EQ(HtmlEscape(name), std::string(299, 'n') + "&lt;") << "forgotten: whole again";
}

}  // namespace
}  // namespace parity
