// The tail of report.html: the locate summary, stage findings, the PyTorch
// alignment and the environment. The locate and alignment parts read JSON
// defensively: a field of the wrong type is shown empty, never thrown on.
#include <fmt/format.h>

#include "report/html_internal.h"
#include "report/json_out.h"

namespace parity::html {

namespace {

using nlohmann::json;

const json& At(const json& j, std::string_view key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Text(const json& j, std::string_view key) { return Esc(JsonText(At(j, key))); }

std::string List(const json& j, size_t max) {
  if (!j.is_array()) return Esc(JsonText(j));
  std::string s;
  for (size_t i = 0; i < j.size() && i < max; ++i) s += (i ? ", " : "") + Esc(JsonText(j[i]));
  if (j.size() > max) s += fmt::format(", &hellip; ({} in all)", j.size());
  return s;
}

// An ErrorSummary of the locate report: "score 12.3 (max_abs 0.04)".
std::string NumText(const json& v) { return v.is_number() ? Num(v.get<double>()) : Esc(JsonText(v)); }

std::string ErrorCell(const json& e) {
  if (!e.is_object()) return "";
  // Numbers at 4 significant digits, never the raw 17 of the JSON.
  auto number = [](const json& v) { return v.is_number() ? Num(v.get<double>()) : Esc(JsonText(v)); };
  return fmt::format("{} &times; tol <span class=\"note\">max_abs {}</span>", number(At(e, "score")),
                     number(At(e, "max_abs")));
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
std::string NarrowingList(const json& culprits) {
  std::string s;
  for (const auto& c : culprits) {
    const json& n = At(c, "narrowing");
    if (!n.is_object()) continue;
    s += fmt::format("<h3>Narrowing <span class=\"mono\">{}</span></h3>\n<ol class=\"narrowing\">\n",
                     Text(c, "fused_node"));
    for (const auto& step : At(n, "steps"))
      s += fmt::format("<li>{} nodes, {} group(s): {} &mdash; <span class=\"mono\">{}</span></li>\n",
                       At(step, "covers").size(), Text(step, "groups"),
                       At(step, "measured") == false ? std::string("not run") : ErrorCell(At(step, "local")),
                       List(At(step, "covers"), 6));
    s += "</ol>\n";
    if (!At(n, "note").is_null()) s += fmt::format("<p class=\"note\">{}</p>\n", Text(n, "note"));
  }
  return s;
}

}  // namespace

std::string LocateSection(const CheckReport& r) {
  if (r.locate.is_null()) return "";
  const json& l = r.locate;
  std::string s = "<section id=\"locate\">\n<h2>Where the target departs</h2>\n";
  const json& d = At(l, "first_divergence");
  if (d.is_object()) {
    s += "<div class=\"callout\"><b>First divergence</b><dl>";
    s += fmt::format("<dt>tensor</dt><dd class=\"mono\">{}</dd>", Text(d, "tensor"));
    s += fmt::format("<dt>produced by</dt><dd class=\"mono\">{}</dd>", Text(d, "producer"));
    s += fmt::format("<dt>fused node</dt><dd class=\"mono\">{} ({})</dd>", Text(d, "fused_node"),
                     Text(d, "op_type"));
    s += fmt::format("<dt>covers</dt><dd class=\"mono\">{}</dd>", List(At(d, "covered_nodes"), 12));
    if (!At(d, "module").is_null())
      s += fmt::format("<dt>PyTorch module</dt><dd class=\"mono\">{}</dd>", Text(d, "module"));
    s += "</dl></div>\n";
  } else {
    s += "<div class=\"callout ok\">No divergence: every observed tensor is within tolerance.</div>\n";
  }
  const json& culprits = At(l, "culprits");
  if (culprits.is_array() && !culprits.empty()) {
    s +=
        "<h3>Suspect fused nodes</h3>\n<p class=\"note\">local: the node fed the reference's inputs (its own "
        "error); inherited: the error already in its inputs. Ablation: the optimizer whose switching off "
        "removes the fusion.</p>\n";
    s += "<div class=\"table-wrap\"><table><thead><tr><th>fused "
         "node</th><th>op</th><th>covers</th><th>local</th>"
         "<th>inherited</th><th>ablation</th></tr></thead><tbody>\n";
    for (const auto& c : culprits) {
      const json& a = At(c, "ablation");
      std::string ablation;
      if (a.is_object() && !At(a, "optimizer").is_null())
        ablation = fmt::format("without <span class=\"mono\">{}</span>: {}; latency {} &rarr; {} ms",
                               Text(a, "optimizer"), ErrorCell(At(a, "local_without")),
                               NumText(At(a, "latency_ms_with")), NumText(At(a, "latency_ms_without")));
      else if (a.is_object())
        ablation = Text(a, "note");
      s += fmt::format(
          "<tr><td class=\"name mono\">{}</td><td>{}</td><td class=\"name mono\">{}</td><td>{}</td>"
          "<td>{}</td><td>{}</td></tr>\n",
          Text(c, "fused_node"), Text(c, "op_type"), List(At(c, "covers"), 8), ErrorCell(At(c, "local")),
          ErrorCell(At(c, "inherited")), ablation);
    }
    s += "</tbody></table></div>\n";
    s += NarrowingList(culprits);
  }
  const json& repro = At(l, "repro");
  if (repro.is_object())
    s += fmt::format("<p>Minimal reproduction: <code>{}</code></p>\n", Text(repro, "path"));
  return s + "</section>\n";
}

std::string StagesSection(const CheckReport& r) {
  std::string s = "<section id=\"stages\">\n<h2>Stages</h2>\n";
  for (const auto& st : r.stages) {
    s += fmt::format(
        "<details class=\"stage\"{}><summary>{} {} <span class=\"note\">{} finding{}</span>"
        "<span class=\"secs\">{} s</span></summary><div>\n",
        st.status == Status3::kFail ? " open" : "", Pill(Status3Name(st.status)), Esc(st.name),
        st.findings.size(), st.findings.size() == 1 ? "" : "s", Num(st.seconds));
    if (st.findings.empty()) {
      s += "<p class=\"empty\">No findings.</p>\n";
    } else {
      s += "<table><thead><tr><th>status</th><th>test</th><th>message</th></tr></thead><tbody>\n";
      for (const auto& f : st.findings)
        s += fmt::format("<tr class=\"{}\"><td>{}</td><td class=\"name mono\">{}</td><td>{}</td></tr>\n",
                         f.status == Status3::kFail ? "fail" : "", Pill(Status3Name(f.status)), Esc(f.id),
                         Esc(f.message));
      s += "</tbody></table>\n";
    }
    s += "</div></details>\n";
  }
  return s + "</section>\n";
}

std::string AlignmentSection(const CheckReport& r) {
  if (r.alignment.is_null()) return "";
  const json* entries = &r.alignment;
  for (const char* key : {"layers", "entries", "alignment"})
    if (At(r.alignment, key).is_array()) entries = &At(r.alignment, key);
  std::string s = "<section id=\"alignment\">\n<h2>PyTorch layer alignment</h2>\n";
  if (!entries->is_array())
    return s + "<pre class=\"json\">" + Esc(ToJsonText(r.alignment, 2)) + "</pre>\n</section>\n";
  size_t matched = 0;
  for (const auto& e : *entries) matched += !At(e, "tensor").is_null();
  s += fmt::format("<p class=\"note\">{} of {} dumped layers matched to an ONNX tensor.</p>\n", matched,
                   entries->size());
  s += "<div class=\"table-wrap\"><table><thead><tr><th>module</th><th>file</th><th>ONNX "
       "tensor</th><th>how</th>"
       "<th>reason</th></tr></thead><tbody>\n";
  size_t rows = 0;
  for (const auto& e : *entries) {
    if (++rows > kMaxTableRows) break;
    s += fmt::format(
        "<tr><td class=\"name mono\">{}</td><td class=\"name mono\">{}</td><td class=\"name mono\">{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        Text(e, "module"), Text(e, "file"), Text(e, "tensor"), Text(e, "how"), Text(e, "reason"));
  }
  return s + "</tbody></table></div>\n</section>\n";
}

std::string EnvironmentSection(const CheckReport& r) {
  std::string s = "<section id=\"environment\">\n<h2>Model, configuration and environment</h2>\n";
  s += "<h3>Model</h3>\n" + KeyValueTable(r.model.is_null() ? json::object() : r.model);
  s += "<h3>Configuration</h3>\n" + KeyValueTable(r.config.is_null() ? json::object() : r.config);
  s += "<h3>Environment</h3>\n" + KeyValueTable(r.env.is_null() ? json::object() : r.env);
  return s + "</section>\n";
}

}  // namespace parity::html
