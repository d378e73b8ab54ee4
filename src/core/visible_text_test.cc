// Names that reach a README (issue 29, probe 7).
#include "core/visible_text.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(VisibleText, ControlsAreShownNotPassed) {
  EXPECT_EQ(ShowControls("a\x1b[2Kb"), "a\\x1b[2Kb");
  EXPECT_EQ(ShowControls("x\ny\tz\x7f"), "x\\x0ay\\x09z\\x7f");
  EXPECT_EQ(ShowControls("x\ny\tz", /*keep_line_breaks=*/true), "x\ny\tz");
  EXPECT_EQ(ShowControls("c1 \xC2\x9B" "2J caf\xC3\xA9"), "c1 \\u009b2J caf\xC3\xA9");
}

TEST(VisibleText, AMarkdownCodeSpanCannotBeClosedByTheName) {
  EXPECT_EQ(MarkdownCode("relu"), "` relu `");
  EXPECT_EQ(MarkdownCode("a`b"), "`` a`b ``");
  EXPECT_EQ(MarkdownCode("x```\n\nRun:\n```"), "```` x```\\x0a\\x0aRun:\\x0a``` ````");
  EXPECT_EQ(MarkdownCode("`"), "`` ` ``");
}

}  // namespace
}  // namespace parity
