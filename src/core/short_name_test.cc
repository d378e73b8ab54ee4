#include "core/short_name.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

// Issue 46, class 5: a long name is shown by its first bytes and a hash, so
// that a report or console line repeating it stays bounded; short names pass.
TEST(ShortName, KeepsShortNamesAndCutsLongOnesWithAHash) {
  EXPECT_EQ(ShortName("relu"), "relu");
  const std::string at_limit(kMaxShownNameBytes, 'a');
  EXPECT_EQ(ShortName(at_limit), at_limit);
  const std::string long_a(1 << 20, 'a'), long_b = std::string(1 << 20, 'a') + "b";
  const std::string a = ShortName(long_a), b = ShortName(long_b);
  EXPECT_EQ(a.size(), kShownNamePrefixBytes + 3 + 16);
  EXPECT_TRUE(a.starts_with(std::string(kShownNamePrefixBytes, 'a') + "...")) << a;
  EXPECT_NE(a, b);  // the hash tells two names with one prefix apart
  // Never cut inside a UTF-8 character: 2-byte characters from an odd offset.
  const std::string utf8 = "x" + [] { std::string s; for (int i = 0; i < 300; ++i) s += "\xC3\xA9"; return s; }();
  const std::string cut = ShortName(utf8);
  const size_t prefix = cut.find("...");
  ASSERT_NE(prefix, std::string::npos);
  EXPECT_EQ(prefix % 2, 1u) << "the prefix ends on a whole character";
}

}  // namespace
}  // namespace parity
