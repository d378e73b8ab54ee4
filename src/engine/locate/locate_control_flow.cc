// Locate through If/Loop bodies (docs/locate.md "Control flow"): the
// reference and target are replaced by their observation copies for the
// sample, each inlined by what the sample decided on its own side, and the
// report's culprits are traced back to the body nodes they came from.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "engine/locate/locate_internal.h"
#include "engine/run/flatten_control_flow.h"
#include "onnx/graph.h"

namespace parity::locate_internal {

namespace {

// Body node descriptions of the copy's nodes, by node name.
Result<std::unordered_map<std::string, std::string>> BodyNodes(const Model& flat) {
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(flat, {.infer_shapes = false}));
  std::unordered_map<std::string, std::string> out;
  for (const auto& n : view.nodes)
    if (auto d = BodyNodeDescription(n.metadata); !d.empty()) out.emplace(n.name, std::move(d));
  return out;
}

// The body a culprit's fused node came from: its own node's, else that of
// the first node it covers that came from a body.
std::string BodyOf(const std::unordered_map<std::string, std::string>& body, const std::string& node,
                   const std::vector<std::string>& covers) {
  if (auto it = body.find(node); it != body.end()) return it->second;
  for (const auto& c : covers)
    if (auto it = body.find(c); it != body.end()) return it->second;
  return "";
}

// Where the two sides took different branches, their copies differ.
void NoteOtherBranches(const FlatModel& reference, const FlatModel& target, std::vector<std::string>& notes) {
  for (const auto& r : reference.branches)
    for (const auto& t : target.branches)
      if (r.node == t.node && r.body_of == t.body_of && r.then_branch != t.then_branch)
        notes.push_back(fmt::format("If '{}'{}: the reference took its {}, the target its {}; their tensors there "
                                    "are not compared",
                                    r.node, r.body_of.empty() ? "" : " in " + r.body_of,
                                    r.then_branch ? "then_branch" : "else_branch",
                                    t.then_branch ? "then_branch" : "else_branch"));
}

}  // namespace

Result<LocateReport> LocateThroughControlFlow(const Model& model, const Model* target_model, const Sample& sample,
                                              const LocateOptions& options) {
  PARITY_ASSIGN_OR_RETURN(FlatModel reference, FlattenForSample(model, sample, options.model_label));
  std::optional<FlatModel> target;
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(target, FlattenForSample(*target_model, sample, options.target_label));
  }
  // The caller's plan and reference values are of the model, not of its copy.
  LocateOptions o = options;
  o.target_plan = nullptr;
  o.reference_values = nullptr;
  PARITY_ASSIGN_OR_RETURN(LocateReport report,
                          LocateGraphs(reference.model, target ? &target->model : nullptr, sample, o));
  report.sessions_created += reference.sessions + (target ? target->sessions : 0);
  AddSample(report.control_flow, reference);
  if (target) {
    for (const auto& n : target->notes)
      if (std::find(report.control_flow.notes.begin(), report.control_flow.notes.end(), n) ==
          report.control_flow.notes.end())
        report.control_flow.notes.push_back(n);
    NoteOtherBranches(reference, *target, report.control_flow.notes);
  }
  NoteUntakenBranches(report.control_flow);
  PARITY_ASSIGN_OR_RETURN(auto body, BodyNodes(reference.model));
  if (target) {
    PARITY_ASSIGN_OR_RETURN(auto target_body, BodyNodes(target->model));
    body.merge(target_body);
  }
  if (report.first_divergence) {
    auto& d = *report.first_divergence;
    d.body = BodyOf(body, d.producer, d.covers);
  }
  for (auto& c : report.culprits) c.body = BodyOf(body, c.fused_node, c.covers);
  return report;
}

}  // namespace parity::locate_internal
