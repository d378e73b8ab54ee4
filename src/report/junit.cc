#include "report/junit.h"

#include <fmt/format.h>

#include <cmath>

#include "report/check_summary.h"
#include "report/text_escape.h"

namespace parity {

namespace {

struct Case {
  std::string classname, name;
  double seconds = 0;
  Verdict status = Verdict::kPass;
  std::string message;  // failure or skip reason
  std::string type;     // failure type
  std::string details;  // failure body
};

struct Suite {
  std::string name;
  double seconds = 0;
  std::vector<Case> cases;
  int Count(Verdict s) const {
    int n = 0;
    for (const auto& c : cases) n += c.status == s;
    return n;
  }
};

Suite StageSuite(const StageResult& stage) {
  Suite suite;
  suite.name = stage.name;
  suite.seconds = stage.seconds;
  const std::string classname = "parity." + stage.name;
  if (stage.findings.empty()) {
    Case c;
    c.classname = classname;
    c.name = stage.name;
    c.seconds = stage.seconds;
    c.status = stage.status;
    c.message = stage.status == Verdict::kUnchecked ? "stage skipped" : "stage failed";
    c.type = "stage";
    suite.cases.push_back(std::move(c));
    return suite;
  }
  const double each = stage.seconds / static_cast<double>(stage.findings.size());
  for (const auto& f : stage.findings)
    suite.cases.push_back({.classname = classname,
                           .name = f.id,
                           .seconds = each,
                           .status = f.status,
                           .message = f.message,
                           .type = stage.name,
                           .details = f.message});
  return suite;
}

Case SampleCase(const SampleResult& s) {
  Case c;
  c.classname = "parity.samples." + (s.kind.empty() ? std::string("user") : s.kind);
  c.name = s.name;
  c.status = s.status;
  std::string failing;
  for (const auto& o : s.outputs) {
    const TensorComparison& cmp = o.comparison;
    c.details += fmt::format("{} vs {}: {}", o.output, o.against, VerdictName(cmp.status));
    if (cmp.status != Verdict::kUnchecked)
      c.details += fmt::format(" max_abs={:.6g} mismatches={}/{} (atol={:g} rtol={:g})", cmp.metrics.max_abs,
                               cmp.metrics.mismatches, cmp.metrics.count, cmp.tolerance.tolerance.atol,
                               cmp.tolerance.tolerance.rtol);
    if (!cmp.reason.empty()) c.details += ": " + cmp.reason;
    c.details += "\n";
    if (cmp.status == Verdict::kFail)
      failing += fmt::format("{}{}{}{}", failing.empty() ? "" : "; ", o.output,
                             cmp.reason.empty() ? "" : ": ", cmp.reason);
  }
  if (!s.error.empty()) {
    c.type = "runtime_error";
    c.message = "ONNX Runtime raised: " + s.error;
    c.details = s.error + "\n" + c.details;
  } else if (!failing.empty()) {
    c.type = "numerics";
    c.message = failing;
  } else {
    c.type = "sample";
    c.message = s.behaviour.empty() ? "sample failed" : s.behaviour;
  }
  if (!s.behaviour.empty()) c.details = "behaviour: " + s.behaviour + "\n" + c.details;
  if (!s.input_summary.empty()) c.details = "inputs: " + s.input_summary + "\n" + c.details;
  return c;
}

// JUnit readers want a finite, non-negative number of seconds.
double Secs(double s) { return std::isfinite(s) && s > 0 ? s : 0.0; }

void AppendCase(std::string& out, const Case& c) {
  out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"", XmlEscape(c.classname),
                     XmlEscape(c.name), Secs(c.seconds));
  if (c.status == Verdict::kPass) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  if (c.status == Verdict::kUnchecked) {
    out += fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(c.message));
  } else {
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", XmlEscape(c.message),
                       XmlEscape(c.type), XmlEscape(c.details.empty() ? c.message : c.details));
  }
  out += "    </testcase>\n";
}

}  // namespace

std::string CheckReportToJUnit(const CheckReport& report) {
  std::vector<Suite> suites;
  for (const auto& stage : report.stages) suites.push_back(StageSuite(stage));
  Suite samples;
  samples.name = "samples";
  for (const auto& s : report.samples) samples.cases.push_back(SampleCase(s));
  suites.push_back(std::move(samples));
  // A check that could not judge enough to pass (NOT JUDGED, exit 4): a
  // failing case of its own, saying what was missing.
  if (!report.coverage.missing.empty()) {
    Suite coverage{.name = "coverage"};
    Case judged{.classname = "coverage", .name = "coverage.judged"};
    judged.status = Verdict::kFail;
    judged.type = "NOT JUDGED";
    judged.message = report.coverage.missing.front();
    for (const auto& why : report.coverage.missing) judged.details += why + "\n";
    coverage.cases.push_back(std::move(judged));
    suites.push_back(std::move(coverage));
  }

  size_t tests = 0;
  int failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& s : suites) {
    tests += s.cases.size();
    failures += s.Count(Verdict::kFail);
    skipped += s.Count(Verdict::kUnchecked);
    seconds += Secs(s.seconds);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // "--" may not appear inside an XML comment.
  std::string against = JudgedAgainst(report);
  for (size_t at; (at = against.find("--")) != std::string::npos;) against.replace(at, 2, "- -");
  out += fmt::format("<!-- {} -->\n", XmlEscape(against));
  out += fmt::format(
      "<testsuites name=\"parity check\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"{:.6f}\">\n",
      tests, failures, skipped, seconds);
  for (const auto& s : suites) {
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
        "time=\"{:.6f}\">\n",
        XmlEscape(s.name), s.cases.size(), s.Count(Verdict::kFail), s.Count(Verdict::kUnchecked),
        Secs(s.seconds));
    for (const auto& c : s.cases) AppendCase(out, c);
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace parity
