#include "report/console/baseline_console.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

// Issue 28: the per-run size is a budget parity sets, not something it
// measured; the line must not read as a measurement.
TEST(BaselineConsole, TheRunBudgetReadsAsALimitNotAMeasurement) {
  BaselineResult r;
  r.batches = 1;
  r.batch_bytes_limit = int64_t{1346} << 20;
  const std::string line = FormatBaselineWritten(r, "m.onnx", "base/", "disable");
  EXPECT_NE(line.find("1 run(s) per sample, each observing tensors up to a budget of 1346.0 MiB (a limit, not a "
                      "measurement)"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("MiB observed"), std::string::npos) << line;
}

}  // namespace
}  // namespace parity
