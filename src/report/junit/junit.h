// JUnit XML writer of the check report, for CI systems (GitLab, Jenkins,
// GitHub test reporters). Layout, MODEL being the model's file name without
// `.onnx` (JUnitModelName), so that several models in one job never collide:
//   <testsuites name="parity check MODEL" tests failures errors skipped time>
//     <testsuite name="MODEL/STAGE"> one per stage; one <testcase> per
//       finding (classname "parity.MODEL.STAGE", name the finding id; a
//       stage without findings is one test case named after the stage).
// The failures are exactly CheckReport::FailedTests(), the console's
// "failed tests (N)": a failed finding that names a sample carries that
// sample's inputs, ORT error and every output's numbers in its body (there is
// no second, per-sample case counting the same failure again). A NOT JUDGED
// check adds one <error type="NOT JUDGED"> case, `coverage.judged`.
// A failed test carries <failure message="reason" type="...">details</failure>,
// a skipped one <skipped message="..."/>. Stage time is the stage's seconds
// (divided evenly over its test cases). All text is escaped for XML 1.0.
#pragma once

#include <string>

#include "engine/check/check_result.h"

namespace parity {

// Never fails; the result is well-formed XML 1.0 in UTF-8.
std::string CheckReportToJUnit(const CheckReport& report);

// The model's name in JUnit suite and class names: the file name of `path`
// without `.onnx`, its dots and spaces made `_` (a classname's dots are
// package separators); "model" for an empty path.
std::string JUnitModelName(const std::string& path);

}  // namespace parity
