#include "onnx/function_cost.h"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace parity::onnx_adapter {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // domain, name, overload

int64_t Add(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

class Costing {
 public:
  explicit Costing(const onnx::ModelProto& model) {
    for (const onnx::FunctionProto& f : model.functions()) functions_[{f.domain(), f.name(), f.overload()}] = &f;
  }

  template <typename Nodes>
  Result<int64_t> Of(const Nodes& nodes) {
    int64_t total = 0;
    for (const onnx::NodeProto& node : nodes) {
      int64_t cost = 1;
      auto it = functions_.find({node.domain(), node.op_type(), node.overload()});
      if (it != functions_.end()) {
        PARITY_ASSIGN_OR_RETURN(cost, Function(it->first, *it->second));
      }
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) {
          PARITY_ASSIGN_OR_RETURN(const int64_t sub, Of(a.g().node()));
          cost = Add(cost, sub);
        }
        for (const onnx::GraphProto& g : a.graphs()) {
          PARITY_ASSIGN_OR_RETURN(const int64_t sub, Of(g.node()));
          cost = Add(cost, sub);
        }
      }
      total = Add(total, cost);
    }
    return total;
  }

 private:
  Result<int64_t> Function(const Key& key, const onnx::FunctionProto& f) {
    if (auto done = cost_.find(key); done != cost_.end()) {
      if (done->second < 0)
        return InvalidArgument(fmt::format("local function '{}' (domain '{}') calls itself", f.name(), f.domain()));
      return done->second;
    }
    // Calls nest on the stack: a chain of 100,000 functions would overflow it.
    if (depth_ >= kMaxFunctionDepth)
      return InvalidArgument(fmt::format("local functions call each other more than {} levels deep (at '{}')",
                                         kMaxFunctionDepth, f.name()));
    cost_[key] = -1;  // in progress: a call back to it is a cycle
    ++depth_;
    auto cost = Of(f.node());
    --depth_;
    if (!cost) return cost;
    cost_[key] = *cost;
    return *cost;
  }

  std::map<Key, const onnx::FunctionProto*> functions_;
  std::map<Key, int64_t> cost_;
  int depth_ = 0;
};

}  // namespace

Result<int64_t> ExpandedNodeCount(const onnx::ModelProto& model) {
  Costing costing(model);
  return costing.Of(model.graph().node());
}

}  // namespace parity::onnx_adapter
