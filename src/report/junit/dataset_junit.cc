// JUnit of `check --dataset`: one test case per output, failing when any
// sample's output is out of tolerance (or, for a classifier, flips). Suite
// and class are named after the model (junit.h JUnitModelName), so that
// several models in one CI job never collide; a failure's message ends with
// where the located samples first diverge, the PyTorch module when known.
#include <fmt/format.h>

#include "report/dataset_report.h"
#include "report/junit/junit.h"
#include "report/text_escape.h"

namespace parity {

std::string DatasetReportToJUnit(const DatasetReport& r) {
  const std::string model = JUnitModelName(r.model);
  const std::string module = DatasetModuleHeadline(r), node = DatasetHeadline(r);
  const std::string where = module.empty() ? node : module;
  std::string cases;
  int failures = 0;
  for (const auto& s : r.summaries) {
    cases += fmt::format("    <testcase classname=\"parity.{}.dataset\" name=\"{}\" time=\"0\"", XmlEscape(model),
                         XmlEscape(s.name));
    if (s.failed == 0) {
      cases += "/>\n";
      continue;
    }
    ++failures;
    const std::string message = fmt::format(
        "{} of {} samples out of tolerance; max_abs max {:.3g}{}{}", s.failed, r.count, s.max_abs.max,
        s.classifier ? fmt::format("; top-1 agreement {:.4f}, {} flipped", s.top1_agreement(), s.flipped.size()) : "",
        where.empty() ? "" : "; " + where);
    std::string body = message + "\n";
    for (const std::string* line : {&module, &node})
      if (!line->empty()) body += *line + "\n";
    cases += fmt::format(">\n      <failure message=\"{}\" type=\"dataset\">{}</failure>\n    </testcase>\n",
                         XmlEscape(message), XmlEscape(body));
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"parity check --dataset {4}\" tests=\"{0}\" "
      "failures=\"{1}\" errors=\"0\" skipped=\"0\" time=\"{2:.6f}\">\n  <testsuite name=\"{4}/dataset\" tests=\"{0}\" "
      "failures=\"{1}\" errors=\"0\" skipped=\"0\" time=\"{2:.6f}\">\n{3}  </testsuite>\n</testsuites>\n",
      r.summaries.size(), failures, r.seconds > 0 ? r.seconds : 0.0, cases, XmlEscape(model));
}

}  // namespace parity
