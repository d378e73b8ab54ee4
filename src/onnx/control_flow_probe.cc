// MakeControlFlowProbe and HasControlFlow (control_flow.h).
#include <fmt/format.h>

#include <set>
#include <string_view>
#include <vector>

#include "onnx/control_flow.h"
#include "onnx/control_flow_internal.h"
#include "onnx/graph.h"
#include "onnx/model_internal.h"

namespace parity {

namespace cf = control_flow_internal;

namespace control_flow_internal {

bool IsControlFlow(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  return n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan";
}

const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

size_t NodeWeight(const onnx::NodeProto& n) {
  size_t w = 1;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) w += GraphWeight(a.g());
    for (const auto& g : a.graphs()) w += GraphWeight(g);
  }
  return w;
}

size_t GraphWeight(const onnx::GraphProto& g) {
  size_t w = 0;
  for (const auto& n : g.node()) w += NodeWeight(n);
  return w;
}

std::string MetadataOf(const onnx::NodeProto& n, std::string_view key) {
  for (const auto& e : n.metadata_props())
    if (e.key() == key) return e.value();
  return "";
}

void SetMetadata(onnx::NodeProto& n, std::string_view key, const std::string& value) {
  for (auto& e : *n.mutable_metadata_props())
    if (e.key() == key) {
      e.set_value(value);
      return;
    }
  auto* e = n.add_metadata_props();
  e->set_key(std::string(key));
  e->set_value(value);
}

}  // namespace control_flow_internal

namespace {

bool OnlyStructural(const onnx::GraphProto& g) {
  static const std::set<std::string_view> kOps = {"Constant", "ConstantOfShape", "Identity", "Cast",
                                                  "Shape",    "Size",            "Reshape",  "Squeeze",
                                                  "Unsqueeze", "Expand",         "Concat"};
  for (const auto& n : g.node()) {
    if ((!n.domain().empty() && n.domain() != "ai.onnx") || !kOps.contains(n.op_type())) return false;
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) return false;
  }
  return true;
}

// The If node called `name` in the bodies of `g`, searched depth first.
const onnx::NodeProto* FindBodyIf(const onnx::GraphProto& g, std::string_view name, int depth = 0) {
  if (depth > 64) return nullptr;
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      for (const auto& inner : a.g().node())
        if (inner.op_type() == "If" && inner.name() == name) return &inner;
      if (const auto* found = FindBodyIf(a.g(), name, depth + 1)) return found;
    }
  }
  return nullptr;
}

}  // namespace

bool BranchComputesNothing(const Model& m, std::string_view if_node, bool then_branch) {
  const onnx::GraphProto& top = onnx_adapter::Proto(m).graph();
  const onnx::NodeProto* node = nullptr;
  if (auto view = BuildGraphView(m, {.infer_shapes = false}))
    for (const GraphNode& n : view->nodes)
      if (n.op_type == "If" && n.name == if_node && static_cast<int>(n.file_index) < top.node_size())
        node = &top.node(static_cast<int>(n.file_index));
  if (node == nullptr) node = FindBodyIf(top, if_node);
  if (node == nullptr) return false;
  const onnx::GraphProto* branch = cf::GraphAttribute(*node, then_branch ? "then_branch" : "else_branch");
  return branch != nullptr && OnlyStructural(*branch);
}

bool HasControlFlow(const Model& m) {
  for (const auto& n : onnx_adapter::Proto(m).graph().node())
    if (cf::IsControlFlow(n)) return true;
  return false;
}

namespace {

void AddOutput(onnx::GraphProto& g, const std::string& name, int elem_type, bool scalar) {
  auto* o = g.add_output();
  o->set_name(name);
  auto* t = o->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  if (scalar) t->mutable_shape();
}

onnx::NodeProto& AddNode(onnx::GraphProto& g, const std::string& op, std::vector<std::string> inputs,
                         const std::string& output) {
  auto* node = g.add_node();
  node->set_op_type(op);
  node->set_name(output);
  for (auto& in : inputs) node->add_input(std::move(in));
  node->add_output(output);
  return *node;
}

// A Loop whose body also hands out its iteration number as a last scan
// output: the Loop's new last output has one element per iteration run. Its
// condition is and-ed with "iteration < max_iterations", so the probe stops
// after max_iterations + 1 (a trip count of INT64_MAX does not hang it).
Status ProbeLoop(onnx::NodeProto& n, const std::string& node_name, const std::string& out,
                 int64_t max_iterations) {
  onnx::GraphProto* body = nullptr;
  for (auto& a : *n.mutable_attribute())
    if (a.name() == "body" && a.has_g()) body = a.mutable_g();
  if (body == nullptr || body->input_size() < 2)
    return InvalidArgument(fmt::format("node '{}' (Loop) has no body with an iteration number input", node_name));
  // Trailing outputs the node leaves out are named "" first: the new one
  // must be at the position of the body's new last output.
  while (n.output_size() < body->output_size() - 1) n.add_output("");
  const std::string copy = out + "/in_body";
  AddNode(*body, "Identity", {body->input(0).name()}, copy);
  AddOutput(*body, copy, onnx::TensorProto::INT64, true);
  auto* limit = body->add_initializer();
  limit->set_name(out + "/limit");
  limit->set_data_type(onnx::TensorProto::INT64);
  limit->add_int64_data(max_iterations);
  AddNode(*body, "Less", {body->input(0).name(), limit->name()}, out + "/below_limit");
  AddNode(*body, "And", {body->output(0).name(), out + "/below_limit"}, out + "/cond");
  body->mutable_output(0)->set_name(out + "/cond");
  n.add_output(out);
  return {};
}

}  // namespace

Result<ProbeModel> MakeControlFlowProbe(const Model& m, int64_t max_iterations) {
  const auto names = NodeNames(m);
  Model probe = m.Clone();
  auto& g = *onnx_adapter::MutableProto(probe).mutable_graph();
  std::vector<ControlFlowProbe> probes;
  const int count = g.node_size();
  for (int i = 0; i < count; ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    if (!cf::IsControlFlow(n)) continue;
    ControlFlowProbe p{.node = names[i], .op_type = n.op_type(), .origin = cf::MetadataOf(n, kBodyNodeKey),
                       .body_of = cf::MetadataOf(n, kBodyOfKey)};
    if (p.origin.empty()) p.origin = p.node;
    const std::string out = fmt::format("parity_probe/{}/{}", i, n.op_type());
    if (n.op_type() == "If") {
      if (n.input_size() < 1 || !cf::GraphAttribute(n, "then_branch") || !cf::GraphAttribute(n, "else_branch"))
        return InvalidArgument(fmt::format("node '{}' (If) lacks its condition or a branch", p.node));
      // An Identity of the condition: graph inputs and initializers too can then be read as outputs.
      AddNode(g, "Identity", {n.input(0)}, out);
      AddOutput(g, out, onnx::TensorProto::BOOL, false);
      p.tensor = out;
    } else if (n.op_type() == "Loop") {
      PARITY_RETURN_IF_ERROR(ProbeLoop(n, p.node, out, max_iterations));
      AddOutput(g, out, onnx::TensorProto::INT64, false);
      p.tensor = out;
    }
    probes.push_back(std::move(p));
  }
  return ProbeModel{.model = std::move(probe), .probes = std::move(probes)};
}

}  // namespace parity
