#include "report/check_report.h"

namespace parity {

std::string_view Status3Name(Status3 s) {
  switch (s) {
    case Status3::kPass: return "PASS";
    case Status3::kFail: return "FAIL";
    case Status3::kSkipped: return "SKIPPED";
  }
  return "?";
}

std::vector<CheckFinding> CheckReport::FailedTests() const {
  std::vector<CheckFinding> failed;
  for (const auto& stage : stages)
    for (const auto& f : stage.findings)
      if (f.status == Status3::kFail) failed.push_back(f);
  return failed;
}

}  // namespace parity
