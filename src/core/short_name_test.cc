#include "core/short_name.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

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

// Every remembered long name is shortened wherever it occurs in a text (a
// message quoting it, a fused node's name made from it); other text passes.
TEST(ShortenLongNames, ReplacesEachRememberedNameWhereverItOccurs) {
  ForgetLongNames();
  const std::string a(300, 'a'), ab = std::string(300, 'a') + std::string(100, 'b');
  EXPECT_EQ(ShortenLongNames("output '" + a + "' differs"), "output '" + a + "' differs") << "none remembered";
  RememberLongName("short");  // not long: never remembered
  RememberLongName(a);
  RememberLongName(ab);  // shares a's first bytes: the longer one wins where it occurs
  RememberLongName(a);
  EXPECT_EQ(LongestRememberedName(), ab.size());
  EXPECT_EQ(ShortenLongNames("output '" + a + "' differs"), "output '" + ShortName(a) + "' differs");
  EXPECT_EQ(ShortenLongNames(ab + "_fused"), ShortName(ab) + "_fused");
  EXPECT_EQ(ShortenLongNames(a + a), ShortName(a) + ShortName(a));
  EXPECT_EQ(ShortenLongNames("short text"), "short text");
  EXPECT_EQ(ShortenLongNames(a.substr(1)), a.substr(1)) << "a part of a name is no name";
  ForgetLongNames();
}

// A stream cut in pieces: a name that starts before the scan's end is
// replaced whole even where it ends past it; the rest waits for the next piece.
TEST(ShortenLongNames, IntoStopsAtTheScanEndButFinishesANameStartedBeforeIt) {
  ForgetLongNames();
  const std::string a(300, 'a');
  RememberLongName(a);
  const std::string text = "xy" + a + "z";
  std::string out;
  EXPECT_EQ(ShortenLongNamesInto(text, 1, out), 1u);
  EXPECT_EQ(out, "x");
  out.clear();
  EXPECT_EQ(ShortenLongNamesInto(text, 3, out), 2u + a.size());
  EXPECT_EQ(out, "xy" + ShortName(a));
  ForgetLongNames();
}

// Issue 56, class 4: names longer than kMaxShownNameBytes that share a long
// common prefix (40,000 dump layers under one 2 KB scope) were grouped by
// their first 32 bytes and searched one by one, and every registration
// scanned and sorted its group: quadratic, over 600 s. Registering them and
// shortening a text that quotes many of them is linear in what they hold.
TEST(ShortenLongNames, ManyNamesSharingALongPrefixAreRegisteredAndFoundInLinearTime) {
  ForgetLongNames();
  const std::string prefix(2048, 'p');
  auto name = [&](int i) { return prefix + "/layer" + std::to_string(i); };
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40000; ++i) RememberLongName(name(i));
  std::string text, expected;
  for (int i = 0; i < 40000; i += 7) {
    text += "node '" + name(i) + "' differs\n";
    expected += "node '" + ShortName(name(i)) + "' differs\n";
  }
  text += prefix + "/layer";  // the common prefix alone is no name
  expected += prefix + "/layer";
  EXPECT_EQ(ShortenLongNames(text), expected);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Linear: about a second here, also under the sanitizers; quadratic took
  // over 600 s. The bound is loose on purpose (a shared, loaded machine).
  EXPECT_LT(seconds, 60.0);
  ForgetLongNames();
}

// The longest remembered name wins where several start at one place, also
// when they differ only past their shared first bytes, whatever the order
// they were remembered in.
TEST(ShortenLongNames, TheLongestOfNamesSharingAPrefixWinsWhateverTheOrder) {
  ForgetLongNames();
  const std::string p(400, 'q');
  const std::string a = p + "a", ab = p + "ab", abc = p + "abc", b = p + "b";
  RememberLongName(ab);
  RememberLongName(a);
  RememberLongName(b);
  RememberLongName(abc);
  EXPECT_EQ(ShortenLongNames(abc + "|" + ab + "x|" + a + "|" + b + "|" + p), ShortName(abc) + "|" + ShortName(ab) + "x|" + ShortName(a) + "|" + ShortName(b) + "|" + p);
  EXPECT_EQ(ShortenLongNames(p + "ac"), ShortName(a) + "c");
  ForgetLongNames();
}

}  // namespace
}  // namespace parity
