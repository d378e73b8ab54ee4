#include "report/fix_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/json/json_helpers.h"

namespace parity {
namespace {

nlohmann::json Optional(const std::optional<double>& v) { return v ? JsonNumber(*v) : nlohmann::json(); }

nlohmann::json FormJson(const FixForm& f) {
  return {{"form", f.what}, {"path", f.path}, {"config", f.config}, {"latency_ms", Optional(f.latency_ms)},
          {"size_bytes", f.size_bytes ? nlohmann::json(*f.size_bytes) : nlohmann::json()}};
}

// A change in one line: its first names and how many more.
std::string Names(const std::vector<std::string>& names, size_t shown = 4) {
  if (names.size() <= shown) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... ({} in all)", fmt::join(names.begin(), names.begin() + static_cast<long>(shown), ", "),
                     names.size());
}

std::string Ms(const std::optional<double>& v) { return v ? fmt::format("{:.3f} ms", *v) : "not timed"; }
std::string Mib(const std::optional<int64_t>& v) {
  return v ? fmt::format("{:.2f} MiB", static_cast<double>(*v) / (1 << 20)) : "size unknown";
}

}  // namespace

nlohmann::json FixResultToJson(const FixResult& r) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.search.probes)
    probes.push_back({{"phase", p.phase}, {"change", p.change}, {"passed", p.passed},
                      {"seconds", JsonNumber(p.seconds)}, {"note", p.note.empty() ? nlohmann::json() : nlohmann::json(p.note)}});
  nlohmann::json cost = nlohmann::json::array();
  for (const auto& f : r.cost) cost.push_back(FormJson(f));
  auto text = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  nlohmann::json settings;
  if (!r.settings.empty()) settings = nlohmann::json::parse(r.settings, nullptr, false);
  return {{"schema", "parity.fix/1"},
          {"kind", r.kind},
          {"needed", r.needed},
          {"found", r.found},
          {"verdict_before", r.verdict_before},
          {"verdict_after", text(r.verdict_after)},
          {"change", r.change},
          {"level", text(r.level)},
          {"seeds", r.seeds},
          {"command", text(r.command)},
          {"remake", text(r.remake)},
          {"written", text(r.written)},
          {"settings", settings.is_discarded() ? nlohmann::json() : settings},
          {"search", {{"runs", r.runs}, {"budget_spent", r.search.budget_spent}, {"minimal", r.search.minimal},
                      {"seconds", JsonNumber(r.seconds)}, {"probes", probes}}},
          {"cost", cost},
          {"top1", r.top1},
          {"note", text(r.note)}};
}

void PrintFixSummary(const FixResult& r, std::FILE* out) {
  if (!r.needed) {
    fmt::print(out, "nothing to fix: the check passes as it is ({})\n", r.verdict_before);
    return;
  }
  fmt::print(out, "check before the fix: {}\n", r.verdict_before);
  if (!r.seeds.empty()) fmt::print(out, "search started at: {}\n", Names(r.seeds));
  const char* what = r.kind == "int8"      ? "keep in float (quantize_static nodes_to_exclude)"
                     : r.kind == "float16" ? "keep in float (the float16 converter's node_block_list)"
                     : r.kind == "optimizers" ? "switch off the ORT optimizer(s)"
                     : r.kind == "ep_options" ? "set the provider option(s)"
                                              : "use the optimization level";
  const char* shape = r.kind == "level" ? "levels below the deployed one, highest first"
                      : r.search.minimal  ? "1-minimal"
                                          : "not minimized";
  fmt::print(out, "{} checks in {:.1f} s ({}{})\n", r.runs, r.seconds, shape,
             r.search.budget_spent ? ", budget spent" : "");
  if (!r.found) {
    fmt::print(out, "no fix found: {}\n", r.note);
    for (const auto& p : r.search.probes)
      fmt::print(out, "  tried [{}] {}: {}{}\n", p.phase, Names(p.change), p.passed ? "pass" : "fail",
                 p.note.empty() ? "" : " (" + p.note + ")");
    return;
  }
  if (r.kind == "level") fmt::print(out, "fix: {} {}\n", what, r.level);
  else fmt::print(out, "fix: {}: {}\n", what, Names(r.change, 16));
  fmt::print(out, "check after the fix: {}\n", r.verdict_after);
  for (const auto& t : r.top1) fmt::print(out, "  {}\n", t);
  for (const auto& f : r.cost)
    fmt::print(out, "  {:<9} {} [{}]: {}, {}\n", f.what, f.path, f.config, Ms(f.latency_ms), Mib(f.size_bytes));
  fmt::print(out, "written: {}\n", r.written);
  if (!r.remake.empty()) fmt::print(out, "re-make it: {}\n", r.remake);
  fmt::print(out, "check it: {}\n", r.command);
  if (!r.note.empty()) fmt::print(out, "note: {}\n", r.note);
}

}  // namespace parity
