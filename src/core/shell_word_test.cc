#include "core/shell_word.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace parity {
namespace {

// What bash's `printf %s WORD` prints: the word as the shell reads it.
std::string AsTheShellReadsIt(const std::string& word) {
  std::string quoted = "'";  // the script for bash -c, itself quoted for popen's sh
  for (char c : "printf %s " + word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const std::string command = "bash -c " + quoted + "'";
  FILE* p = ::popen(command.c_str(), "r");
  std::string out;
  std::array<char, 256> buf{};
  for (size_t n; p != nullptr && (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  if (p != nullptr) ::pclose(p);
  return out;
}

// Issue 56, class 14: paths on a printed command line are single words the
// shell reads back exactly; nothing in them runs.
TEST(ShellWord, EveryPathIsOneWordTheShellReadsBackExactly) {
  EXPECT_EQ(ShellWord("/opt/ort/lib/libonnxruntime.so.1.29.0"), "/opt/ort/lib/libonnxruntime.so.1.29.0");
  EXPECT_EQ(ShellWord(""), "''");
  EXPECT_EQ(ShellWord("a b"), "'a b'");
  EXPECT_EQ(ShellWord("it's"), "'it'\\''s'");
  for (const std::string s : {"/tmp/a b/lib.so", "/tmp/$(touch /tmp/parity-pwned)/lib.so", "/tmp/`id`/x;rm -rf y",
                              "it's \"quoted\" *?[x] ~user !hist", "line\nbreak\x1b[2K", "back\\slash'\n"}) {
    const std::string word = ShellWord(s);
    EXPECT_EQ(word.find('\n'), std::string::npos) << "one line: " << word;
    EXPECT_EQ(AsTheShellReadsIt(word), s) << word;
  }
}

}  // namespace
}  // namespace parity
