// The tail of report.html: the locate summary, stage findings, the PyTorch
// alignment and the environment, rendered from the report's typed results;
// the model, configuration and environment tables flatten the JSON the
// report's own writers make of them (report/json/check_json.h).
#include <cmath>

#include <fmt/format.h>

#include "core/json_out.h"
#include "report/json/check_json.h"
#include "compare/judge.h"
#include "report/html/html_internal.h"
#include "report/json/json_helpers.h"

namespace parity::html {

namespace {

using nlohmann::json;

std::string List(const std::vector<std::string>& items, size_t max) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < max; ++i) s += (i ? ", " : "") + Breakable(items[i]);
  if (items.size() > max) s += fmt::format(", &hellip; ({} in all)", items.size());
  return s;
}

// Numbers at 4 significant digits, never the raw 17 of the JSON; a
// non-finite one as the JSON writes it ("inf", "nan").
std::string NumText(double v) { return std::isfinite(v) ? Num(v) : Esc(JsonText(JsonNumber(v))); }

// An ErrorSummary of the locate report: "12.3 × tol (max_abs 0.04)"; empty
// when the group had nothing to measure.
std::string ErrorCell(const ErrorSummary& e) {
  if (e.tensor.empty()) return "";
  return fmt::format("{} &times; tol <span class=\"note\">max_abs {}</span>", NumText(e.score),
                     NumText(e.max_abs));
}

void Flatten(const json& j, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      // An opset's "" domain is ai.onnx.
      const std::string key = it.key().empty() ? "(default)" : it.key();
      Flatten(it.value(), prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (j.is_array() && !j.empty() && j[0].is_object()) {
    for (size_t i = 0; i < j.size(); ++i) Flatten(j[i], fmt::format("{}[{}]", prefix, i), out);
  } else {
    out.emplace_back(prefix, JsonText(j));
  }
}

std::string KeyValueTable(const json& j) {
  std::vector<std::pair<std::string, std::string>> rows;
  Flatten(j, "", rows);
  std::string s = "<table class=\"kv\"><tbody>\n";
  for (const auto& [k, v] : rows)
    s += fmt::format("<tr><th class=\"mono\">{}</th><td class=\"mono\">{}</td></tr>\n", Esc(k), Esc(v));
  return s + "</tbody></table>\n";
}

// The drill-down of each narrowed culprit: one line per step, the region
// shrinking to the group that changed the numbers.
std::string NarrowingList(const std::vector<LocateCulprit>& culprits) {
  std::string s;
  for (const auto& c : culprits) {
    if (!c.narrowing) continue;
    const LocateNarrowing& n = *c.narrowing;
    s += fmt::format("<h3>Narrowing <span class=\"mono\">{}</span></h3>\n<ol class=\"narrowing\">\n",
                     Breakable(c.fused_node));
    for (const auto& step : n.steps)
      s += fmt::format("<li>{} nodes, {} group(s): {} &mdash; <span class=\"mono\">{}</span></li>\n",
                       step.covers.size(), step.groups, step.measured ? ErrorCell(step.local) : "not run",
                       List(step.covers, 6));
    s += "</ol>\n";
    if (!n.note.empty()) s += fmt::format("<p class=\"note\">{}</p>\n", Esc(n.note));
  }
  return s;
}

std::string AblationCell(const std::optional<LocateAblation>& a) {
  if (!a) return "";
  if (a->optimizer.empty()) return Esc(a->note);
  return fmt::format("without <span class=\"mono\">{}</span>: {}; latency {} &rarr; {} ms", Breakable(a->optimizer),
                     ErrorCell(a->local_without), NumText(a->latency_ms_with), NumText(a->latency_ms_without));
}

}  // namespace

std::string LocateSection(const CheckReport& r) {
  if (!r.locate) return "";
  const LocateReport& l = *r.locate;
  std::string s = "<section id=\"locate\">\n<h2>Where the target departs</h2>\n";
  if (l.first_divergence) {
    const FirstDivergence& d = *l.first_divergence;
    s += "<div class=\"callout\"><b>First divergence</b><dl>";
    s += fmt::format("<dt>tensor</dt><dd class=\"mono\">{}</dd>", Breakable(d.tensor));
    s += fmt::format("<dt>produced by</dt><dd class=\"mono\">{}</dd>", Breakable(d.producer));
    s += fmt::format("<dt>fused node</dt><dd class=\"mono\">{} ({})</dd>", Breakable(d.fused_node),
                     Breakable(d.op_type));
    s += fmt::format("<dt>covers</dt><dd class=\"mono\">{}</dd>", List(d.covers, 12));
    s += "</dl></div>\n";
  } else {
    s += "<div class=\"callout ok\">No divergence: every observed tensor is within tolerance.</div>\n";
  }
  if (!l.culprits.empty()) {
    s +=
        "<h3>Suspect fused nodes</h3>\n<p class=\"note\">local: the node fed the reference's inputs (its own "
        "error); inherited: the error already in its inputs. Ablation: the optimizer whose switching off "
        "removes the fusion.</p>\n";
    s += "<div class=\"table-wrap\"><table><thead><tr><th>fused "
         "node</th><th>op</th><th>covers</th><th>local</th>"
         "<th>inherited</th><th>ablation</th></tr></thead><tbody>\n";
    for (const auto& c : l.culprits)
      s += fmt::format(
          "<tr><td class=\"name mono\">{}</td><td class=\"name\">{}</td><td class=\"name mono\">{}</td><td>{}</td>"
          "<td>{}</td><td class=\"ablation\">{}</td></tr>\n",
          Breakable(c.fused_node), Breakable(c.op_type), List(c.covers, 8), ErrorCell(c.local), ErrorCell(c.inherited),
          AblationCell(c.ablation));
    s += "</tbody></table></div>\n";
    s += NarrowingList(l.culprits);
  }
  if (!l.repro.empty()) s += fmt::format("<p>Minimal reproduction: <code>{}</code></p>\n", Esc(l.repro));
  return s + "</section>\n";
}

std::string StagesSection(const CheckReport& r) {
  std::string s = "<section id=\"stages\">\n<h2>Stages</h2>\n";
  for (const auto& st : r.stages) {
    s += fmt::format(
        "<details class=\"stage\"{}><summary>{} {} <span class=\"note\">{} finding{}</span>"
        "<span class=\"secs\">{} s</span></summary><div>\n",
        st.status == Verdict::kFail ? " open" : "", Pill(CheckVerdictName(st.status)), Esc(st.name),
        st.findings.size(), st.findings.size() == 1 ? "" : "s", Num(st.seconds));
    if (st.findings.empty()) {
      s += "<p class=\"empty\">No findings.</p>\n";
    } else {
      s += "<table><thead><tr><th>status</th><th>test</th><th>message</th></tr></thead><tbody>\n";
      for (const auto& f : st.findings)
        s += fmt::format("<tr class=\"{}\"><td>{}</td><td class=\"name mono\">{}</td><td>{}</td></tr>\n",
                         f.status == Verdict::kFail ? "fail" : "", Pill(CheckVerdictName(f.status)), Breakable(f.id),
                         Breakable(f.message));
      s += "</tbody></table>\n";
    }
    s += "</div></details>\n";
  }
  return s + "</section>\n";
}

std::string AlignmentSection(const CheckReport& r) {
  if (!r.alignment) return "";
  const TorchComparison& c = *r.alignment;
  const std::vector<LayerVerdict>& layers = c.layers;
  std::string s = "<section id=\"alignment\">\n<h2>Against PyTorch, layer by layer</h2>\n";
  size_t matched = 0;
  for (const auto& v : layers) matched += !v.alignment.tensor.empty();
  s += fmt::format("<p class=\"note\">{} of {} dumped layers matched to an ONNX tensor; {} pass, {} fail. {}</p>\n",
                   matched, layers.size(), c.Count(Verdict::kPass), c.Count(Verdict::kFail), Esc(c.VerdictLine()));
  s += "<div class=\"chart\" id=\"chart-torch-layers\" data-chart=\"layer_curve\" data-source=\"torch_curve\">"
       "<div class=\"chart-title\">Error along the graph against PyTorch: each dumped layer in execution order, "
       "its error divided by the tolerance</div></div>\n";
  s += "<div class=\"table-wrap\"><table class=\"alignment\"><thead><tr><th>module</th><th>status</th>"
       "<th class=\"num\">max_abs</th><th class=\"num\">error / tol.</th><th>ONNX tensor</th><th>how</th>"
       "<th>reason</th></tr></thead><tbody>\n";
  size_t rows = 0;
  for (const auto& v : layers) {
    if (++rows > kMaxTableRows) break;
    const LayerAlignment& a = v.alignment;
    const bool judged = v.status != Verdict::kUnchecked && v.metrics.count > 0;
    s += fmt::format(
        "<tr class=\"{}\"><td class=\"name mono\" title=\"{}\">{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"name mono\">{}</td><td>{}</td><td class=\"reason\">{}</td></tr>\n",
        v.status == Verdict::kFail ? "fail" : "", Esc(a.file), Esc(a.module), Pill(VerdictName(v.status)),
        judged ? Num(v.metrics.max_abs) : "", judged ? Num(v.score) : "",
        Esc(a.tensor), Esc(AlignHowName(a.how)), Esc(v.reason.empty() ? a.reason : v.reason));
  }
  s += "</tbody></table></div>\n";
  if (rows > kMaxTableRows)
    s += fmt::format("<p class=\"note\">First {} layers shown; report.json has all.</p>\n", kMaxTableRows);
  return s + "</section>\n";
}

std::string EnvironmentSection(const CheckReport& r) {
  std::string s = "<section id=\"environment\">\n<h2>Model, configuration and environment</h2>\n";
  s += "<h3>Model</h3>\n" + KeyValueTable(r.model ? CheckModelToJson(r) : json::object());
  s += "<h3>Configuration</h3>\n" + KeyValueTable(CheckConfigToJson(r));
  s += "<h3>Environment</h3>\n" + KeyValueTable(CheckEnvToJson(r));
  return s + "</section>\n";
}

}  // namespace parity::html
