#include "report/junit/junit.h"

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
      "  for c in cases:\n"
      "    if c.find('failure') is not None: print('CASE', repr(c.get('name')), repr(c.find('failure').text))\n"
      "  print(s.get('name'), s.get('tests'), s.get('failures'), s.get('skipped'), len(cases), len(fails))\n"
      "  for f in fails: print('FAILURE', repr(f.get('message')))\n";
  std::string out;
  const int rc = RunCommand(
      PARITY_PYTHON " -c " + ShellQuote(script) + " " + ShellQuote(path.string()) + " 2>&1", &out);
  return rc == 0 ? out : "python failed: " + out;
}

TEST(JUnit, ParsesWithOneCasePerFindingNamedAfterTheModel) {
  const std::string out = ParseWithPython(CheckReportToJUnit(MakeSampleReport()));
  // syntax, signature, runtime: 1 finding each; numerics 2; robustness is
  // skipped without findings (one case). 6 cases in all, 1 failure: the one
  // failed test, as the console counts it. Suites are named after the model
  // ("/models/resnet & co.onnx").
  EXPECT_NE(out.find("total 6 1 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("resnet_&_co/syntax 1 0 0 1 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("resnet_&_co/numerics 2 1 0 2 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("resnet_&_co/robustness 1 0 1 1 0\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("samples"), std::string::npos) << out;  // no second case per failed sample
  // The failure messages survive the escaping intact.
  EXPECT_NE(out.find("FAILURE '3 NaN mismatches; max_abs 0.5 > atol 1e-4 <&>'"), std::string::npos) << out;
  EXPECT_NE(out.find("</script><script>alert(1)</script>"), std::string::npos) << out;
}

// Issue 54: two models' reports in one CI job: no test case of one has the
// classname and name of a test case of the other.
TEST(JUnit, TwoModelsInOneJobDoNotCollide) {
  CheckReport a = MakeSampleReport(), b = MakeSampleReport();
  a.model->path = "models/resnet18.onnx";
  b.model->path = "models/mobilenet.v3.onnx";
  const std::string xa = CheckReportToJUnit(a), xb = CheckReportToJUnit(b);
  EXPECT_NE(xa.find("<testsuites name=\"parity check resnet18\""), std::string::npos) << xa.substr(0, 300);
  EXPECT_NE(xa.find("classname=\"parity.resnet18.numerics\""), std::string::npos);
  EXPECT_NE(xb.find("classname=\"parity.mobilenet_v3.numerics\""), std::string::npos);
  EXPECT_NE(xb.find("<testsuite name=\"mobilenet_v3/numerics\""), std::string::npos);
  EXPECT_EQ(xa.find("mobilenet"), std::string::npos);
  EXPECT_EQ(JUnitModelName(""), "model");
}

TEST(JUnit, AFailedSamplesFindingCarriesItsRuntimeErrorAndNumbers) {
  CheckReport r = MakeSampleReport();
  r.samples[1].error = "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions\x01 for input";
  const std::string xml = CheckReportToJUnit(r);
  const std::string out = ParseWithPython(xml);
  EXPECT_NE(out.find("total 6 1 1\n"), std::string::npos) << out;
  EXPECT_NE(xml.find("ONNX Runtime raised: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT"), std::string::npos) << xml;
  EXPECT_NE(xml.find("inputs: images float32 [1, 3, 64, 64]"), std::string::npos) << xml;
  EXPECT_NE(xml.find("max_abs=0.5 mismatches=12/1000"), std::string::npos) << xml;
  EXPECT_EQ(xml.find('\x01'), std::string::npos);  // XML 1.0 forbids it
}

TEST(JUnit, NotJudgedIsAnErrorNotAFailedTest) {
  CheckReport r = MakeSampleReport();
  r.stages[2].findings.pop_back();
  r.stages[2].status = Verdict::kPass;
  r.overall = Verdict::kUnchecked;
  r.coverage.missing = {"no sample was judged"};
  const std::string xml = CheckReportToJUnit(r);
  EXPECT_NE(xml.find("failures=\"0\" errors=\"1\""), std::string::npos) << xml.substr(0, 400);
  EXPECT_NE(xml.find("<error message=\"no sample was judged\" type=\"NOT JUDGED\">"), std::string::npos) << xml;
}

TEST(JUnit, TimesAreFiniteAndSummed) {
  CheckReport r = MakeSampleReport();
  r.stages[0].seconds = std::numeric_limits<double>::quiet_NaN();
  const std::string xml = CheckReportToJUnit(r);
  EXPECT_EQ(xml.find("time=\"nan"), std::string::npos);
  EXPECT_EQ(xml.find("time=\"-"), std::string::npos);
  EXPECT_NE(
      xml.find("<testsuites name=\"parity check resnet_&amp;_co\" tests=\"6\" failures=\"1\" errors=\"0\" "
               "skipped=\"1\" time=\"1.000000\">"),
      std::string::npos)
      << xml.substr(0, 300);
}

}  // namespace
}  // namespace parity
