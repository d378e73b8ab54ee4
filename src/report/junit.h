// JUnit XML writer of the check report, for CI systems (GitLab, Jenkins,
// GitHub test reporters). Layout:
//   <testsuites name="parity check" tests failures skipped time>
//     <testsuite name="STAGE"> one per stage; one <testcase> per finding
//       (classname "parity.STAGE", name the finding id; a stage without
//       findings is one test case named after the stage);
//     <testsuite name="samples"> one <testcase> per sample (classname
//       "parity.samples.KIND"), failing with the ORT error or the outputs
//       out of tolerance.
// A failed test carries <failure message="reason" type="...">details</failure>,
// a skipped one <skipped message="..."/>. Stage time is the stage's seconds
// (divided evenly over its test cases). All text is escaped for XML 1.0.
#pragma once

#include <string>

#include "engine/check/check_result.h"

namespace parity {

// Never fails; the result is well-formed XML 1.0 in UTF-8.
std::string CheckReportToJUnit(const CheckReport& report);

}  // namespace parity
