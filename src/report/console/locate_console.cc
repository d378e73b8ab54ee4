// Console writer of the locate report: what a person reads first.
#include <fmt/format.h>

#include "report/control_flow_writer.h"
#include "report/ep_report.h"
#include "report/locate_report.h"
#include "report/text_escape.h"
#include "report/quant_report.h"
#include "report/runtimes_report.h"

namespace parity {

namespace {

std::string Join(const std::vector<std::string>& v, size_t max_items) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max_items; ++i) s += (i ? ", " : "") + ConsoleName(v[i]);
  if (v.size() > max_items) s += fmt::format(", ... ({} in all)", v.size());
  return s;
}

}  // namespace

void PrintLocateSummary(const LocateReport& r, std::FILE* out) {
  fmt::print(out, "locate {}{}: reference [{}], target [{}], sample '{}'\n", r.model,
             r.target_model.empty() ? "" : " -> " + r.target_model, r.reference.Label(), r.target.Label(),
             r.sample);
  if (r.runtimes) {
    for (const std::string& line : RuntimeLines(*r.runtimes)) fmt::print(out, "  {}\n", line);
  } else {
    fmt::print(out, "  onnxruntime: {} ({})\n", r.ort.version, r.ort.library);
  }
  fmt::print(out, "  graph: {} original nodes, {} optimized nodes, {} fused nodes\n", r.original_nodes,
             r.optimized_nodes, r.fused_nodes.size());
  fmt::print(out, "  observer_check: {} (mode {})\n", r.observer_check ? "true" : "FALSE", r.observer_mode);
  for (const auto& n : r.observer_notes) fmt::print(out, "    {}\n", n);
  fmt::print(out, "  tensors: {} pass, {} fail, {} unchecked\n", r.CountStatus(Verdict::kPass),
             r.CountStatus(Verdict::kFail), r.CountStatus(Verdict::kUnchecked));
  if (!r.first_divergence) {
    fmt::print(out, "  no divergence: every observed tensor is within tolerance\n");
  } else {
    const auto& d = *r.first_divergence;
    // Names from the model: one line each, whatever they hold.
    fmt::print(out, "  first divergence: tensor '{}' from '{}'\n", ConsoleName(d.tensor), ConsoleName(d.producer));
    fmt::print(out, "    fused node '{}' ({}) covers: {}\n", ConsoleName(d.fused_node), ConsoleName(d.op_type),
               Join(d.covers, 8));
    if (!d.body.empty()) fmt::print(out, "    from the body: {}\n", ConsoleName(d.body));
    for (const auto& t : r.tensors)
      if (t.name == d.tensor && t.metrics)
        fmt::print(out, "    max_abs {:.3g} at {} (ref {:.6g}, target {:.6g}), {} of {} elements out of tolerance\n",
                   t.metrics->max_abs, fmt::join(t.metrics->max_abs_index, ","), t.metrics->ref_at_max,
                   t.metrics->test_at_max, t.metrics->mismatches, t.metrics->count);
  }
  if (!r.culprits.empty()) {
    fmt::print(out, "  culprits (by local error, fed reference inputs; score 1 = tolerance):\n");
    fmt::print(out, "    {:<3} {:<36} {:<26} {:>10} {:>10} {:>10}  {}\n", "#", "fused node", "op", "local",
               "inherited", "max_abs", "optimizer (latency with/without)");
    for (size_t i = 0; i < r.culprits.size(); ++i) {
      const auto& c = r.culprits[i];
      std::string opt = "-";
      if (c.ablation && !c.ablation->optimizer.empty())
        opt = fmt::format("{} ({:.3f}/{:.3f} ms)", c.ablation->optimizer, c.ablation->latency_ms_with,
                          c.ablation->latency_ms_without);
      else if (c.ablation && c.ablation->note.starts_with("present with optimizations off"))
        opt = "none: the models differ here";
      else if (c.ablation)
        opt = "none found";
      fmt::print(out, "    {:<3} {:<36} {:<26} {:>10.3g} {:>10.3g} {:>10.3g}  {}\n", i + 1,
                 ConsoleName(c.fused_node).substr(0, 36), ConsoleName(c.op_type).substr(0, 26), c.local.score, c.inherited.score,
                 c.local.max_abs, opt);
    }
    for (size_t i = 0; i < r.culprits.size(); ++i)
      if (!r.culprits[i].body.empty())
        fmt::print(out, "    {}: {} is {}\n", i + 1, ConsoleName(r.culprits[i].fused_node), ConsoleName(r.culprits[i].body));
    if (r.runtimes) fmt::print(out, "    top culprit: {}\n", ConsoleName(r.culprits.front().note));
    if (const auto& top = r.culprits.front(); top.ablation && top.ablation->optimizer.empty() &&
                                              !top.ablation->note.empty())
      fmt::print(out, "    top culprit: {}\n", top.ablation->note);
  }
  for (const auto& c : r.culprits) {
    if (!c.narrowing) continue;
    const auto& n = *c.narrowing;
    fmt::print(out, "  narrowing to '{}' ({} sub-regions run, {} sessions):\n", ConsoleName(c.fused_node),
               n.sub_regions_run,
               n.sessions);
    for (size_t i = 0; i < n.steps.size(); ++i) {
      const auto& s = n.steps[i];
      const std::string local = s.measured ? fmt::format("local {:>9.3g} (max_abs {:.3g})", s.local.score,
                                                         s.local.max_abs)
                                           : std::string("not run (the half before it does not reproduce)");
      fmt::print(out, "    {}. {:>4} nodes, {:>3} group(s), {}: {}\n", i + 1, s.covers.size(), s.groups, local,
                 Join(s.covers, 4));
    }
    if (!n.note.empty()) fmt::print(out, "    {}\n", n.note);
  }
  if (r.quant) fmt::print(out, "{}", FormatQuantTable(*r.quant));
  for (const std::string& line : AssignmentLines(r.target_assignment)) fmt::print(out, "  target EP: {}\n", line);
  if (r.arithmetic) fmt::print(out, "  why: {}\n", ConsoleName(ArithmeticLine(*r.arithmetic)));
  PrintControlFlow(out, r.control_flow, "  ");
  for (const auto& n : r.notes) fmt::print(out, "  note: {}\n", n);
  if (!r.repro.empty()) fmt::print(out, "  reproduction written to {}\n", r.repro);
}

}  // namespace parity
