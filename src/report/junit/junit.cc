#include "report/junit/junit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "report/check_summary.h"
#include "report/text_escape.h"

namespace parity {

namespace {

struct Case {
  std::string classname, name;
  double seconds = 0;
  Verdict status = Verdict::kPass;
  bool error = false;   // a <error> (NOT JUDGED), not a <failure>
  std::string message;  // failure or skip reason
  std::string type;     // failure type
  std::string details;  // failure body
};

struct Suite {
  std::string name;
  double seconds = 0;
  std::vector<Case> cases;
  int Count(Verdict s, bool error = false) const {
    int n = 0;
    for (const auto& c : cases) n += c.status == s && c.error == error;
    return n;
  }
};

// What a sample shows: its inputs, behaviour, ORT error and every output's numbers.
std::string SampleDetails(const SampleResult& s) {
  std::string details;
  if (!s.input_summary.empty()) details += "inputs: " + s.input_summary + "\n";
  if (!s.behaviour.empty()) details += "behaviour: " + s.behaviour + "\n";
  if (!s.error.empty()) details += "ONNX Runtime raised: " + s.error + "\n";
  for (const auto& o : s.outputs) {
    const TensorComparison& cmp = o.comparison;
    details += fmt::format("{} vs {}: {}", o.output, o.against, VerdictName(cmp.status));
    if (cmp.status != Verdict::kUnchecked)
      details += fmt::format(" max_abs={:.6g} mismatches={}/{} (atol={:g} rtol={:g})", cmp.metrics.max_abs,
                             cmp.metrics.mismatches, cmp.metrics.count, cmp.tolerance.tolerance.atol,
                             cmp.tolerance.tolerance.rtol);
    if (!cmp.reason.empty()) details += ": " + cmp.reason;
    details += "\n";
  }
  return details;
}

// The sample a finding id names ("numerics.typical.logits", "numerics.user0"):
// the longest sample name that follows the stage's "STAGE." prefix whole.
const SampleResult* SampleOf(const CheckReport& r, const std::string& stage, const std::string& id) {
  const std::string prefix = stage + ".";
  if (id.rfind(prefix, 0) != 0) return nullptr;
  const std::string rest = id.substr(prefix.size());
  const SampleResult* best = nullptr;
  for (const auto& s : r.samples) {
    const bool names = rest == s.name || rest.rfind(s.name + ".", 0) == 0;
    if (names && (!best || s.name.size() > best->name.size())) best = &s;
  }
  return best;
}

Suite StageSuite(const CheckReport& r, const StageResult& stage, const std::string& model) {
  Suite suite;
  suite.name = model + "/" + stage.name;
  suite.seconds = stage.seconds;
  const std::string classname = "parity." + model + "." + stage.name;
  if (stage.findings.empty()) {
    Case c;
    c.classname = classname;
    c.name = stage.name;
    c.seconds = stage.seconds;
    c.status = stage.status;
    // A failed stage without a failed finding is no failed test (the
    // console lists none): an <error>, so the failure count stays theirs.
    c.error = stage.status == Verdict::kFail;
    c.message = stage.status == Verdict::kUnchecked ? "stage skipped" : "stage failed";
    c.type = "stage";
    suite.cases.push_back(std::move(c));
    return suite;
  }
  const double each = stage.seconds / static_cast<double>(stage.findings.size());
  // Failures first, the culprit first among them (check_summary.h CulpritRank), then the rest as found.
  std::vector<const CheckFinding*> order;
  for (const auto& f : stage.findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const CheckFinding* a, const CheckFinding* b) {
    const auto rank = [](const CheckFinding* f) { return f->status == Verdict::kFail ? CulpritRank(f->id) : 4; };
    return rank(a) < rank(b);
  });
  for (const CheckFinding* finding : order) {
    const CheckFinding& f = *finding;
    Case c{.classname = classname, .name = f.id, .seconds = each, .status = f.status, .message = f.message,
           .type = stage.name, .details = f.message};
    if (f.status == Verdict::kFail)
      if (const SampleResult* s = SampleOf(r, stage.name, f.id)) c.details += "\n" + SampleDetails(*s);
    suite.cases.push_back(std::move(c));
  }
  return suite;
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
    out += fmt::format("      <{0} message=\"{1}\" type=\"{2}\">{3}</{0}>\n", c.error ? "error" : "failure",
                       XmlEscape(c.message), XmlEscape(c.type), XmlEscape(c.details.empty() ? c.message : c.details));
  }
  out += "    </testcase>\n";
}

}  // namespace

std::string JUnitModelName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  for (char& c : name)
    if (c == '.' || c == ' ' || c == '/') c = '_';
  return name.empty() ? "model" : name;
}

std::string CheckReportToJUnit(const CheckReport& report) {
  const std::string model = JUnitModelName(report.model ? report.model->path : "");
  std::vector<Suite> suites;
  for (const auto& stage : report.stages) suites.push_back(StageSuite(report, stage, model));
  // A check that could not judge enough to pass (NOT JUDGED, exit 4): an
  // error case of its own, saying what was missing (not a failed test).
  if (!report.coverage.missing.empty()) {
    Suite coverage{.name = model + "/coverage"};
    Case judged{.classname = "parity." + model + ".coverage", .name = "coverage.judged"};
    judged.status = Verdict::kFail;
    judged.error = true;
    judged.type = "NOT JUDGED";
    judged.message = report.coverage.missing.front();
    for (const auto& why : report.coverage.missing) judged.details += why + "\n";
    coverage.cases.push_back(std::move(judged));
    suites.push_back(std::move(coverage));
  }

  size_t tests = 0;
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const auto& s : suites) {
    tests += s.cases.size();
    failures += s.Count(Verdict::kFail);
    errors += s.Count(Verdict::kFail, true);
    skipped += s.Count(Verdict::kUnchecked);
    seconds += Secs(s.seconds);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // "--" may not appear inside an XML comment.
  std::string against = JudgedAgainst(report);
  for (size_t at; (at = against.find("--")) != std::string::npos;) against.replace(at, 2, "- -");
  out += fmt::format("<!-- {} -->\n", XmlEscape(against));
  out += fmt::format(
      "<testsuites name=\"parity check {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{:.6f}\">\n",
      XmlEscape(model), tests, failures, errors, skipped, seconds);
  for (const auto& s : suites) {
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"{:.6f}\">\n",
        XmlEscape(s.name), s.cases.size(), s.Count(Verdict::kFail), s.Count(Verdict::kFail, true),
        s.Count(Verdict::kUnchecked), Secs(s.seconds));
    for (const auto& c : s.cases) AppendCase(out, c);
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace parity
