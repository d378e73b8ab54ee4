#include "report/sample_notes.h"

#include <fmt/format.h>

#include "report/text_escape.h"

namespace parity {

std::vector<std::string> SampleNoteLines(const SampleNotes& notes) {
  std::vector<std::string> lines;
  std::string roles;
  for (const auto& [name, role] : notes.roles)
    if (role != InputRole::kOther)
      roles += fmt::format("{}{} {}", roles.empty() ? "" : ", ", ConsoleName(name), InputRoleName(role));
  if (!roles.empty()) lines.push_back("input roles: " + roles);
  std::string kept;
  for (const auto& relation : notes.relations) kept += fmt::format("{}{}", kept.empty() ? "" : "; ", ConsoleName(relation));
  if (!kept.empty()) lines.push_back("sizes kept together: " + kept);
  if (!notes.bounded.empty()) lines.push_back("sizes bounded: " + ConsoleName(notes.bounded));
  return lines;
}

}  // namespace parity
