// What the graph does with an integer input, read for generated samples:
// indices into a Gather (its values are ids below the table's rows) or a
// count (a Loop's trip count, a Range's bounds, a shape).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/inputs/sample_plan.h"
#include "onnx/edit.h"

namespace parity::sample_internal {

namespace {

// Ops that pass indices through unchanged on their way to a Gather.
bool PassesIndices(const GraphNode& n) {
  static const std::set<std::string> kOps = {"Cast",    "Unsqueeze", "Squeeze",
                                             "Reshape", "Flatten",   "Identity"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

// What WalkConsumers does after visiting one consumer.
enum class Walk { kSkip, kFollow, kStop };

// Visits every node that reads `input`, or a tensor it flows into through the
// nodes a visit follows: visit(node, tensor) says whether to walk on into the
// node's first output (kFollow), not (kSkip), or end the walk (kStop).
// Returns whether a visit stopped it.
template <typename Visit>
bool WalkConsumers(const GraphView& g, const std::string& input, Visit visit) {
  std::vector<std::string> frontier = {input};
  std::set<std::string> seen;
  while (!frontier.empty()) {
    std::string tensor = frontier.back();
    frontier.pop_back();
    if (!seen.insert(tensor).second) continue;
    auto it = g.consumers.find(tensor);
    if (it == g.consumers.end()) continue;
    for (size_t index : it->second) {
      const GraphNode& n = g.nodes[index];
      const Walk next = visit(n, tensor);
      if (next == Walk::kStop) return true;
      if (next == Walk::kFollow && !n.outputs.empty()) frontier.push_back(n.outputs[0]);
    }
  }
  return false;
}


// Where a node reads a size or a count: the input positions of each op
// whose value sets how many iterations run or how many elements are made.
const std::map<std::string, std::vector<size_t>>& CountSinks() {
  static const std::map<std::string, std::vector<size_t>> kSinks = {
      {"Loop", {0}},   {"Range", {0, 1, 2}}, {"ConstantOfShape", {0}}, {"Expand", {1}},
      {"Tile", {1}},   {"Reshape", {1}},     {"Resize", {3}},          {"Pad", {1}},
      {"TopK", {1}},   {"OneHot", {1}},      {"NonMaxSuppression", {2}}};
  return kSinks;
}

// Ops a count passes through on its way to where it is used.
bool PassesCount(const GraphNode& n) {
  static const std::set<std::string> kOps = {"Cast", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity",
                                             "Concat", "Add", "Mul", "Max", "Min", "Abs"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

}  // namespace

int64_t FindVocab(const Model& model, const GraphView& g, const std::string& input) {
  int64_t vocab = 0;
  WalkConsumers(g, input, [&](const GraphNode& n, const std::string& tensor) {
    if (n.domain.empty() && n.op_type == "Gather" && n.inputs.size() >= 2 && n.inputs[1] == tensor) {
      auto data = ReadInitializer(model, n.inputs[0]);
      if (data && data->rank() >= 1 && data->shape()[0] > 0)
        vocab = vocab == 0 ? data->shape()[0] : std::min(vocab, data->shape()[0]);
      return Walk::kSkip;
    }
    return PassesIndices(n) && !n.inputs.empty() && n.inputs[0] == tensor ? Walk::kFollow : Walk::kSkip;
  });
  return vocab;
}

bool FeedsCount(const GraphView& g, const std::string& input) {
  return WalkConsumers(g, input, [](const GraphNode& n, const std::string& tensor) {
    auto sink = n.domain.empty() ? CountSinks().find(n.op_type) : CountSinks().end();
    if (sink != CountSinks().end())
      for (size_t at : sink->second)
        if (at < n.inputs.size() && n.inputs[at] == tensor) return Walk::kStop;
    // Reshape's data passes a count on; its shape input is a sink above.
    return PassesCount(n) && !n.inputs.empty() && (n.op_type != "Reshape" || n.inputs[0] == tensor)
               ? Walk::kFollow
               : Walk::kSkip;
  });
}

}  // namespace parity::sample_internal
