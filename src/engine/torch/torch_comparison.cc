// What a comparison with PyTorch says of itself (torch_compare.h's
// TorchComparison): its counts by alignment and verdict, and the lines the
// reports print. Pure: no ORT, no dump read.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/torch/torch_compare.h"

namespace parity {

int TorchComparison::Count(AlignHow how) const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [&](const LayerVerdict& l) { return l.alignment.how == how; }));
}

int TorchComparison::Folded() const {
  return static_cast<int>(
      std::count_if(layers.begin(), layers.end(), [](const LayerVerdict& l) { return l.alignment.folded; }));
}

int TorchComparison::AlignedLeaves() const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(), [](const LayerVerdict& l) {
    return l.alignment.leaf && l.alignment.how != AlignHow::kNone;
  }));
}

int TorchComparison::StructuralLeaves() const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(), [](const LayerVerdict& l) {
    return l.alignment.leaf && ByStructure(l.alignment.how);
  }));
}

std::string TorchComparison::AlignmentLine() const {
  return fmt::format("{} layers: {} by scope, {} by name, {} by value, {} folded, {} without an ONNX counterpart{}",
                     layers.size(), Count(AlignHow::kScope), Count(AlignHow::kName), Count(AlignHow::kValue),
                     Folded(), Count(AlignHow::kNone) - Folded(), paths.Identity() ? "" : "; " + paths.Describe());
}

std::string UnexplainedDivergence::Describe() const {
  std::string where = after_module.empty() ? "before any aligned layer" : fmt::format("after '{}'", after_module);
  std::string span;
  const size_t shown = std::min<size_t>(unchecked_modules.size(), 6);
  for (size_t k = 0; k < shown; ++k) span += (k ? ", " : "") + unchecked_modules[k];
  if (unchecked_modules.size() > shown) span += fmt::format(", ... ({} in all)", unchecked_modules.size());
  return fmt::format(
      "the output(s) {} differ from PyTorch, but no aligned layer does: the divergence lies {}, in what could "
      "not be aligned{}",
      fmt::format("'{}'", fmt::join(failing_outputs, "', '")), where,
      span.empty() ? " (the ops between the last aligned layer and the outputs)" : ": " + span);
}

std::vector<size_t> TorchComparison::UncheckedExpected() const {
  std::vector<size_t> out;
  for (size_t k = 0; k < layers.size(); ++k)
    if (layers[k].status == Verdict::kUnchecked && layers[k].alignment.expected) out.push_back(k);
  return out;
}

std::vector<size_t> TorchComparison::Refused() const {
  std::vector<size_t> out;
  for (size_t k = 0; k < layers.size(); ++k)
    if (layers[k].status == Verdict::kUnchecked && layers[k].alignment.refused) out.push_back(k);
  return out;
}

std::vector<size_t> TorchComparison::Uncovered() const {
  // Without structure (no layer placed by scope or name) refusals are the
  // only sign of a divergence value alignment gives: none is covered.
  if (Count(AlignHow::kScope) + Count(AlignHow::kName) == 0) return Refused();
  std::optional<size_t> last_pass;
  for (size_t k = 0; k < layers.size(); ++k)
    if (layers[k].status == Verdict::kPass && !layers[k].alignment.tensor.empty()) last_pass = k;
  std::vector<size_t> out;
  for (size_t k : Refused())
    if (!last_pass || k > *last_pass) out.push_back(k);
  return out;
}

namespace {

// "'a', 'b', ... (9 in all)" of the given layers.
std::string NameLayers(const TorchComparison& c, const std::vector<size_t>& which, size_t shown = 6) {
  std::string out;
  for (size_t k = 0; k < std::min(shown, which.size()); ++k)
    out += fmt::format("{}'{}'", k ? ", " : "", TorchDump::Describe(TorchLayerOf(c.layers[which[k]].alignment)));
  if (which.size() > shown) out += fmt::format(", ... ({} in all)", which.size());
  return out;
}

}  // namespace

std::string TorchComparison::UncheckedExpectedLine() const {
  const std::vector<size_t> expected = UncheckedExpected();
  if (expected.empty()) return "";
  return fmt::format("{} layer(s) unchecked though they should have an ONNX tensor ({} refused by value): {}",
                     expected.size(), Refused().size(), NameLayers(*this, expected));
}

std::string TorchComparison::VerdictLine() const {
  const std::vector<size_t> refused = Refused();
  if (first_divergence && !divergent_op) {
    // Refused layers before it: the divergence may start earlier, unseen.
    std::vector<size_t> before;
    for (size_t k : refused)
      if (k < *first_divergence) before.push_back(k);
    if (!before.empty())
      return FirstDivergenceLine() +
             fmt::format("; before it, value alignment refused {} layer(s) whose tensors disagree: {}: the divergence "
                         "may start there",
                         before.size(), NameLayers(*this, before));
  }
  const std::vector<size_t> uncovered = Uncovered();
  if (!first_divergence && !unexplained && !uncovered.empty()) {
    const LayerAlignment& a = layers[uncovered.front()].alignment;
    return fmt::format(
        "no aligned layer diverges, but {} layer(s) that should have an ONNX tensor could not be checked, and no "
        "agreeing layer follows them: value alignment refused them, as the tensors of their shape where they ran "
        "disagree with PyTorch: {} (first: {}): a divergence there would not be seen",
        uncovered.size(), NameLayers(*this, uncovered), a.reason);
  }
  if (!first_divergence && !unexplained && !refused.empty())
    return fmt::format("{}; value alignment refused {} layer(s) ({}), each followed by layers that agree: a divergence "
                       "there would have shown after them",
                       FirstDivergenceLine(), refused.size(), NameLayers(*this, refused));
  return FirstDivergenceLine();
}

std::string TorchComparison::FirstDivergenceLine() const {
  if (divergent_op) {
    const DivergentOp& op = *divergent_op;
    return fmt::format(
        "first divergent layer: module '{}': its own op '{}' ({}), outside its dumped submodules, computes the "
        "input of '{}', which already departs from PyTorch's (max_abs {:.3g})",
        op.module.empty() ? "(the model's own forward)" : op.module, op.node, op.op_type, op.feeds, op.max_abs);
  }
  if (first_divergence) {
    const LayerVerdict& v = layers[*first_divergence];
    return fmt::format("first divergent layer: module '{}'{} ({}) -> ONNX tensor '{}' of node '{}' ({}): {}",
                       v.alignment.module, v.alignment.call > 0 ? fmt::format(" (call {})", v.alignment.call) : "",
                       v.alignment.type, v.alignment.tensor, v.alignment.node, v.alignment.op_type, v.reason);
  }
  if (unexplained) return unexplained->Describe();
  return "no divergent layer, and the outputs agree: the export computes what PyTorch computes";
}

int TorchComparison::Count(Verdict v) const {
  return static_cast<int>(
      std::count_if(layers.begin(), layers.end(), [&](const LayerVerdict& l) { return l.status == v; }));
}

}  // namespace parity
