// Words of a command line that parity prints for people to paste into a
// shell (a repro's README, Model Explorer's command in the reports).
#pragma once

#include <string>
#include <string_view>

namespace parity {

// `s` as one word of a POSIX shell command: as it is when it holds only
// characters no shell treats specially, else single-quoted (a quote inside
// as '\''), so `$(...)`, backquotes, spaces, globs and `;` stay text. A word
// with control characters (a newline, ESC) is written in ANSI-C quoting
// ($'...' with \xHH escapes, bash, zsh, ksh and POSIX 2024's sh), so the
// printed command stays on one line and shows them. The empty word is ''.
std::string ShellWord(std::string_view s);

}  // namespace parity
