#include "report/junit.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/testing/temp_dir.h"
#include "report/report_test_util.h"

namespace parity {
namespace {

using testing_util::MakeSampleReport;
using testing_util::RunCommand;
using testing_util::ShellQuote;

// Parses the XML with Python's xml.etree and prints one line per suite:
// "name tests failures skipped cases-counted failure-elements", then each
// failure message.
std::string ParseWithPython(const std::string& xml) {
  const testing::TempDir path_tmp("parity_report");
  const auto path = path_tmp.path() / "junit.xml";
  std::ofstream(path, std::ios::binary) << xml;
  const std::string script =
      "import sys, xml.etree.ElementTree as E\n"
      "root = E.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == 'testsuites', root.tag\n"
      "print('total', root.get('tests'), root.get('failures'), root.get('skipped'))\n"
      "for s in root.findall('testsuite'):\n"
      "  cases = s.findall('testcase')\n"
      "  fails = [c.find('failure') for c in cases if c.find('failure') is not None]\n"
      "  print(s.get('name'), s.get('tests'), s.get('failures'), s.get('skipped'), len(cases), len(fails))\n"
      "  for f in fails: print('FAILURE', repr(f.get('message')))\n";
  std::string out;
  const int rc = RunCommand(
      PARITY_PYTHON " -c " + ShellQuote(script) + " " + ShellQuote(path.string()) + " 2>&1", &out);
  return rc == 0 ? out : "python failed: " + out;
}

TEST(JUnit, ParsesWithOneCasePerFindingAndSample) {
  const std::string out = ParseWithPython(CheckReportToJUnit(MakeSampleReport()));
  // syntax, signature, runtime: 1 finding each; numerics 2; robustness is
  // skipped without findings (one case); samples 2. 8 cases in all.
  EXPECT_NE(out.find("total 8 2 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("syntax 1 0 0 1 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("numerics 2 1 0 2 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("robustness 1 0 1 1 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("samples 2 1 0 2 1\n"), std::string::npos) << out;
  // The failure messages survive the escaping intact.
  EXPECT_NE(out.find("FAILURE '3 NaN mismatches; max_abs 0.5 > atol 1e-4 <&>'"), std::string::npos) << out;
  EXPECT_NE(out.find("</script><script>alert(1)</script>"), std::string::npos) << out;
}

TEST(JUnit, RuntimeErrorIsTheFailureMessage) {
  CheckReport r = MakeSampleReport();
  r.samples[0].status = Verdict::kFail;
  r.samples[0].error = "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions\x01 for input";
  const std::string xml = CheckReportToJUnit(r);
  const std::string out = ParseWithPython(xml);
  EXPECT_NE(out.find("samples 2 2 0 2 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ONNX Runtime raised: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT"), std::string::npos)
      << out;
  EXPECT_EQ(xml.find('\x01'), std::string::npos);  // XML 1.0 forbids it
}

TEST(JUnit, TimesAreFiniteAndSummed) {
  CheckReport r = MakeSampleReport();
  r.stages[0].seconds = std::numeric_limits<double>::quiet_NaN();
  const std::string xml = CheckReportToJUnit(r);
  EXPECT_EQ(xml.find("time=\"nan"), std::string::npos);
  EXPECT_EQ(xml.find("time=\"-"), std::string::npos);
  EXPECT_NE(
      xml.find("<testsuites name=\"parity check\" tests=\"8\" failures=\"2\" errors=\"0\" skipped=\"1\" "
               "time=\"1.000000\">"),
      std::string::npos)
      << xml.substr(0, 300);
}

}  // namespace
}  // namespace parity
