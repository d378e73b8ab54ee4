#include "report/ep_report.h"

#include <fmt/format.h>

#include <map>

namespace parity {
namespace {

struct EpTotals {
  int subgraphs = 0;
  std::vector<std::pair<std::string, std::string>> nodes;  // (name, op type)
  std::map<std::string, int> ops;
};

// Per EP, in order of first appearance.
std::vector<std::pair<std::string, EpTotals>> ByEp(const std::vector<ort::EpAssignment>& assignment) {
  std::vector<std::pair<std::string, EpTotals>> out;
  for (const ort::EpAssignment& a : assignment) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == a.ep; });
    if (it == out.end()) it = out.insert(out.end(), {a.ep, EpTotals{}});
    ++it->second.subgraphs;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const std::string op = i < a.op_types.size() ? a.op_types[i] : "";
      it->second.nodes.emplace_back(a.nodes[i], op);
      ++it->second.ops[op];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> AssignmentLines(const std::vector<ort::EpAssignment>& assignment) {
  std::vector<std::string> lines;
  const auto eps = ByEp(assignment);
  for (const auto& [ep, t] : eps) {
    std::string ops;
    for (const auto& [op, n] : t.ops) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op, n);
    if (ep == "CPUExecutionProvider" && eps.size() > 1)
      lines.push_back(fmt::format("{}: {} node(s) fell back to CPU ({})", ep, t.nodes.size(), ops));
    else if (ep == "CPUExecutionProvider")
      lines.push_back(fmt::format("{}: {} node(s) ({})", ep, t.nodes.size(), ops));
    else
      lines.push_back(fmt::format("{}: {} subgraph(s), {} node(s) ({})", ep, t.subgraphs, t.nodes.size(), ops));
  }
  return lines;
}

nlohmann::json AssignmentToJson(const std::vector<ort::EpAssignment>& assignment) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [ep, t] : ByEp(assignment)) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& [name, op] : t.nodes) nodes.push_back({{"name", name}, {"op_type", op}});
    out.push_back({{"ep", ep}, {"subgraphs", t.subgraphs}, {"nodes", nodes}});
  }
  return out;
}

nlohmann::json ArithmeticToJson(const std::optional<ArithmeticVerdict>& v) {
  if (!v) return nullptr;
  return {{"arithmetic", v->arithmetic}, {"relative_error", v->relative_error},
          {"unit_roundoff", v->unit_roundoff}, {"cause", v->cause},
          {"fix", v->fix},               {"evidence", v->evidence},
          {"node", v->node.empty() ? nlohmann::json(nullptr) : nlohmann::json(v->node)},
          {"summary", ArithmeticLine(*v)}};
}

}  // namespace parity
