// InlineControlFlow (control_flow.h): an If replaced by its taken branch, a
// Loop by its iterations, in a copy of the model.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "onnx/control_flow.h"
#include "onnx/control_flow_internal.h"
#include "onnx/graph.h"
#include "onnx/model_internal.h"

namespace parity {

namespace cf = control_flow_internal;

namespace {

using NameMap = std::unordered_map<std::string, std::string>;

// Names `g` and the graphs nested in it define: graph inputs and node
// outputs (initializers keep their names: they are copied once).
void CollectDefined(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  for (const auto& v : g.input()) out.insert(v.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output())
      if (!o.empty()) out.insert(o);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectDefined(a.g(), out);
      for (const auto& sg : a.graphs()) CollectDefined(sg, out);
    }
  }
}

std::string Mapped(const NameMap& map, const std::string& name) {
  auto it = map.find(name);
  return it == map.end() ? name : it->second;
}

void RenameGraph(onnx::GraphProto& g, const NameMap& map);

void RenameNode(onnx::NodeProto& n, const NameMap& map) {
  for (auto& s : *n.mutable_input())
    if (!s.empty()) s = Mapped(map, s);
  for (auto& s : *n.mutable_output())
    if (!s.empty()) s = Mapped(map, s);
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) RenameGraph(*a.mutable_g(), map);
    for (auto& sg : *a.mutable_graphs()) RenameGraph(sg, map);
  }
}

void RenameGraph(onnx::GraphProto& g, const NameMap& map) {
  for (auto& v : *g.mutable_input()) v.set_name(Mapped(map, v.name()));
  for (auto& v : *g.mutable_output()) v.set_name(Mapped(map, v.name()));
  for (auto& v : *g.mutable_value_info()) v.set_name(Mapped(map, v.name()));
  for (auto& n : *g.mutable_node()) RenameNode(n, map);
}

// The new top-level graph being written, and the names it already uses.
struct Emitter {
  onnx::GraphProto& g;
  std::unordered_set<std::string> node_names;
  std::unordered_set<std::string> defined;  // inputs, initializers, node outputs
  std::unordered_set<std::string> typed;    // names with a declared type
  int64_t opset = 0;

  std::string NodeName(const std::string& base) {
    std::string name = base;
    for (int k = 1; !node_names.insert(name).second; ++k) name = fmt::format("{}#{}", base, k);
    return name;
  }
  std::string TensorName(const std::string& base, const std::string& owner) {
    std::string name = base;
    if (defined.contains(name)) name = fmt::format("{}@{}", base, owner);
    for (int k = 1; defined.contains(name); ++k) name = fmt::format("{}@{}#{}", base, owner, k);
    defined.insert(name);
    return name;
  }
  void Initializer(onnx::TensorProto t) {
    if (defined.insert(t.name()).second) *g.add_initializer() = std::move(t);
  }
  // A new initializer: its name made unique from `base`, returned.
  std::string Int64(const std::string& base, const std::string& owner, std::vector<int64_t> values, bool scalar) {
    onnx::TensorProto t;
    t.set_name(TensorName(base, owner));
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    *g.add_initializer() = t;
    return t.name();
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                        const std::string& name, const std::string& body_of) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(NodeName(name));
    for (const auto& in : inputs) n->add_input(in);
    n->add_output(output);
    defined.insert(output);
    cf::SetMetadata(*n, kBodyOfKey, body_of);
    return *n;
  }
};

struct BodyCopy {
  const std::string& node_suffix;  // appended to each body node's name
  const std::string& tensor_suffix;
  const std::string& owner;        // the control-flow node, for names that would collide
  const std::string& body_of;
  bool keep_shapes;  // a Loop's shapes may change from one iteration to the next
};

// Copies `body`'s nodes to the top level. `map` binds the body's inputs and
// some of its outputs to outer names; every other name the body defines
// gets the tensor suffix. Returns the whole map.
NameMap CopyBody(Emitter& e, const onnx::GraphProto& body, NameMap map, const BodyCopy& c) {
  std::unordered_set<std::string> defined;
  CollectDefined(body, defined);
  for (const auto& name : defined)
    if (!map.contains(name)) map.emplace(name, e.TensorName(name + c.tensor_suffix, c.owner));
  for (const auto& t : body.initializer()) e.Initializer(t);
  for (int i = 0; i < body.node_size(); ++i) {
    const auto& n = body.node(i);
    onnx::NodeProto copy = n;
    RenameNode(copy, map);
    const std::string original = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
    copy.set_name(e.NodeName(original + c.node_suffix));
    cf::SetMetadata(copy, kBodyNodeKey, original);
    cf::SetMetadata(copy, kBodyOfKey, c.body_of);
    *e.g.add_node() = std::move(copy);
  }
  const auto declare = [&](const onnx::ValueInfoProto& v) {
    const std::string name = Mapped(map, v.name());
    if (!v.has_type() || !e.typed.insert(name).second) return;
    auto* d = e.g.add_value_info();
    *d = v;
    d->set_name(name);
    if (!c.keep_shapes && d->type().has_tensor_type()) d->mutable_type()->mutable_tensor_type()->clear_shape();
  };
  for (const auto& v : body.value_info()) declare(v);
  for (const auto& v : body.output()) declare(v);
  return map;
}

// What a node inlined from a body adds to the names of what it brings up.
std::string SuffixOf(const std::string& flat_name, const std::string& origin) {
  return flat_name.size() > origin.size() && flat_name.starts_with(origin) ? flat_name.substr(origin.size()) : "";
}

std::string Where(const std::string& here, const std::string& parent) {
  return parent.empty() ? here : fmt::format("{} in {}", here, parent);
}

struct Site {
  const onnx::NodeProto& node;
  std::string name;    // its name in the graph
  std::string origin;  // its name in its own body
  std::string parent;  // where that body was
};

// The branch's outputs are written under the If's output names by the
// branch's own nodes where they can be (a fault is then named at the body
// node), else by an Identity.
void InlineIf(Emitter& e, const Site& s, bool then_branch) {
  const onnx::GraphProto& b = *cf::GraphAttribute(s.node, then_branch ? "then_branch" : "else_branch");
  const std::string where = Where(fmt::format("If '{}' {}", s.origin, then_branch ? "then_branch" : "else_branch"),
                                  s.parent);
  std::unordered_set<std::string> produced;
  for (const auto& n : b.node())
    for (const auto& o : n.output()) produced.insert(o);
  NameMap map;
  std::vector<std::pair<std::string, std::string>> copies;
  for (int i = 0; i < s.node.output_size() && i < b.output_size(); ++i) {
    const std::string& src = b.output(i).name();
    const std::string& dst = s.node.output(i);
    if (dst.empty()) continue;
    if (produced.contains(src) && map.emplace(src, dst).second) continue;
    copies.emplace_back(src, dst);
  }
  const std::string suffix = SuffixOf(s.name, s.origin);
  const NameMap final_map = CopyBody(e, b, std::move(map), {suffix, "", s.name, where, true});
  for (const auto& [src, dst] : copies) e.Node("Identity", {Mapped(final_map, src)}, dst, s.name + "/output", where);
}

// Scan outputs: each iteration's value gets a leading axis, then all are
// concatenated along it.
void StackScanOutput(Emitter& e, const Site& s, const std::vector<std::string>& values, const std::string& out) {
  std::vector<std::string> stacked;
  const std::string axes = e.opset >= 13 ? e.Int64(s.name + "/axes_0", s.name, {0}, false) : "";
  for (const auto& v : values) {
    const std::string u = e.TensorName(v + "/stacked", s.name);
    auto& n = e.Node("Unsqueeze", e.opset >= 13 ? std::vector<std::string>{v, axes} : std::vector<std::string>{v}, u,
                     s.name + "/stack", fmt::format("Loop '{}' result", s.origin));
    if (e.opset < 13) {
      auto* a = n.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(0);
    }
    stacked.push_back(u);
  }
  auto& concat = e.Node("Concat", stacked, out, s.name + "/concat", fmt::format("Loop '{}' result", s.origin));
  auto* a = concat.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
}

void InlineLoop(Emitter& e, const Site& s, int64_t iterations) {
  const onnx::GraphProto& body = *cf::GraphAttribute(s.node, "body");
  const int carried_count = s.node.input_size() - 2;
  const int scan_count = body.output_size() - 1 - carried_count;
  std::vector<std::string> carried(s.node.input().begin() + 2, s.node.input().end());
  std::string cond = s.node.input(1);
  if (cond.empty()) {
    onnx::TensorProto t;
    t.set_name(cond = e.TensorName(s.name + "/true", s.name));
    t.set_data_type(onnx::TensorProto::BOOL);
    t.add_int32_data(1);
    *e.g.add_initializer() = std::move(t);
  }
  std::vector<std::vector<std::string>> scans(scan_count);
  for (int64_t k = 0; k < iterations; ++k) {
    const std::string iter = e.Int64(fmt::format("{}/iteration_{}", s.name, k), s.name, {k}, true);
    NameMap map{{body.input(0).name(), iter}, {body.input(1).name(), cond}};
    for (int j = 0; j < carried_count && 2 + j < body.input_size(); ++j) map[body.input(2 + j).name()] = carried[j];
    const std::string suffix = fmt::format("{}@{}", SuffixOf(s.name, s.origin), k);
    const std::string where = Where(fmt::format("Loop '{}' iteration {}", s.origin, k), s.parent);
    const NameMap final_map = CopyBody(e, body, std::move(map), {suffix, suffix, s.name, where, false});
    cond = Mapped(final_map, body.output(0).name());
    for (int j = 0; j < carried_count; ++j) carried[j] = Mapped(final_map, body.output(1 + j).name());
    for (int j = 0; j < scan_count; ++j) scans[j].push_back(Mapped(final_map, body.output(1 + carried_count + j).name()));
  }
  for (int j = 0; j < carried_count; ++j)
    if (!s.node.output(j).empty())
      e.Node("Identity", {carried[j]}, s.node.output(j), fmt::format("{}/final_{}", s.name, j),
             fmt::format("Loop '{}' result", s.origin));
  for (int j = 0; j < scan_count && carried_count + j < s.node.output_size(); ++j)
    if (!s.node.output(carried_count + j).empty()) StackScanOutput(e, s, scans[j], s.node.output(carried_count + j));
}

// Why a node is left as it was, or "" when it can be inlined. `added`: the
// nodes the new graph holds so far, nested bodies included; a copy is
// budgeted by every node it holds, its nested bodies' too (issue 56 class 2:
// a Loop whose one-node body is a Loop of a Loop copied them all).
std::string Refusal(const Site& s, int64_t value, size_t added, const InlineLimits& limits) {
  if (s.node.op_type() == "If") {
    const onnx::GraphProto* branch = cf::GraphAttribute(s.node, value != 0 ? "then_branch" : "else_branch");
    if (branch != nullptr && added + cf::GraphWeight(*branch) > limits.max_nodes)
      return fmt::format("If '{}': its {} holds {} nodes with its nested bodies, more than the {} nodes parity adds: "
                         "its body is not observed",
                         s.origin, value != 0 ? "then_branch" : "else_branch", cf::GraphWeight(*branch),
                         limits.max_nodes);
    return "";
  }
  if (s.node.op_type() != "Loop") return "";
  const onnx::GraphProto* body = cf::GraphAttribute(s.node, "body");
  const int carried = s.node.input_size() - 2;
  if (body == nullptr || carried < 0 || body->input_size() != carried + 2 || body->output_size() < carried + 1)
    return fmt::format("Loop '{}': its body does not match its inputs; the body is not observed", s.origin);
  if (value > limits.max_iterations)
    return fmt::format("Loop '{}' ran more than {} iterations, the most parity unrolls: its body is not observed",
                       s.origin, limits.max_iterations);
  if (const size_t weight = cf::GraphWeight(*body);
      value > 0 && (weight > limits.max_nodes || added + static_cast<size_t>(value) * weight > limits.max_nodes))
    return fmt::format("Loop '{}': {} iterations of {} nodes (nested bodies included) exceed the {} nodes parity "
                       "adds: its body is not observed",
                       s.origin, value, weight, limits.max_nodes);
  if (value == 0 && body->output_size() > carried + 1)
    return fmt::format("Loop '{}' ran no iteration: its body computed nothing to observe", s.origin);
  return "";
}

}  // namespace

Result<InlinedModel> InlineControlFlow(const Model& m, const std::vector<ControlFlowDecision>& decisions,
                                       const InlineLimits& limits) {
  const auto names = NodeNames(m);
  std::unordered_map<std::string, int64_t> decided;
  for (const auto& d : decisions) decided[d.node] = d.value;
  InlinedModel result{.model = m.Clone()};
  auto& g = *onnx_adapter::MutableProto(result.model).mutable_graph();
  Emitter e{.g = g, .node_names = {names.begin(), names.end()}, .defined = onnx_adapter::DefinedNames(g)};
  e.opset = onnx_adapter::DefaultOpset(onnx_adapter::Proto(result.model));
  for (const auto& v : g.input()) e.typed.insert(v.name());
  for (const auto& v : g.output()) e.typed.insert(v.name());
  for (const auto& v : g.value_info()) e.typed.insert(v.name());
  auto old_nodes = std::move(*g.mutable_node());
  g.clear_node();
  size_t found = 0;
  size_t weight = 0;  // the nodes of the new graph, nested bodies included
  for (int i = 0; i < old_nodes.size(); ++i) {
    const onnx::NodeProto& n = old_nodes.Get(i);
    auto it = decided.find(names[i]);
    const bool is_cf = cf::IsControlFlow(n);
    found += is_cf && it != decided.end();
    std::string origin = cf::MetadataOf(n, kBodyNodeKey);
    const Site s{.node = n, .name = names[i], .origin = origin.empty() ? names[i] : origin,
                 .parent = cf::MetadataOf(n, kBodyOfKey)};
    if (is_cf && n.op_type() == "Scan")
      result.notes.push_back(fmt::format("Scan '{}': parity does not unroll Scan; its body is not observed", s.origin));
    const std::string refusal = is_cf && it != decided.end() ? Refusal(s, it->second, weight, limits) : "";
    if (!refusal.empty()) result.notes.push_back(refusal);
    if (!is_cf || it == decided.end() || n.op_type() == "Scan" || !refusal.empty()) {
      // The name graph.h gives it in `m`: its place in the file changes here.
      g.add_node()->CopyFrom(n);
      g.mutable_node(g.node_size() - 1)->set_name(names[i]);
      weight += cf::NodeWeight(n);
      continue;
    }
    const int before = g.node_size();
    if (n.op_type() == "If")
      InlineIf(e, s, it->second != 0);
    else
      InlineLoop(e, s, it->second);
    for (int k = before; k < g.node_size(); ++k) weight += cf::NodeWeight(g.node(k));
    ++result.inlined;
  }
  if (found != decided.size())
    return InvalidArgument("a control-flow decision names a node that is not an If or Loop of the graph");
  return result;
}

}  // namespace parity
