#include "onnx/graph.h"

#include <fmt/format.h>

#include <functional>
#include <queue>
#include <unordered_set>

#include "onnx/model_internal.h"
#include "onnx/tensor_type_internal.h"
#include "onnx/validate.h"

namespace parity {

namespace {

// Names a subgraph reads from outside itself, recursively.
void CollectOuterReads(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  const auto defined = onnx_adapter::DefinedNames(g);
  const auto add = [&](const std::string& name) {
    if (!name.empty() && !defined.contains(name)) out.insert(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) add(in);
    for (const auto& a : n.attribute()) {
      std::unordered_set<std::string> inner;
      if (a.has_g()) CollectOuterReads(a.g(), inner);
      for (const auto& sg : a.graphs()) CollectOuterReads(sg, inner);
      for (const auto& name : inner) add(name);
    }
  }
  for (const auto& o : g.output()) add(o.name());
}

std::vector<std::string> ImplicitInputs(const onnx::NodeProto& n) {
  std::unordered_set<std::string> reads;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) CollectOuterReads(a.g(), reads);
    for (const auto& sg : a.graphs()) CollectOuterReads(sg, reads);
  }
  std::vector<std::string> out(reads.begin(), reads.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> NodeNames(const Model& m) {
  const auto& g = onnx_adapter::Proto(m).graph();
  std::unordered_set<std::string> used;
  for (const auto& n : g.node())
    if (!n.name().empty()) used.insert(n.name());
  std::unordered_set<std::string> taken;
  std::vector<std::string> names;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    std::string name = n.name();
    if (name.empty() || taken.contains(name)) {
      const std::string base = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
      name = base;
      for (int k = 1; used.contains(name) || taken.contains(name); ++k) name = fmt::format("{}_{}", base, k);
    }
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

const std::string* GraphNode::Metadata(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return &v;
  return nullptr;
}

const GraphNode* GraphView::Producer(const std::string& tensor) const {
  auto it = producer.find(tensor);
  return it == producer.end() ? nullptr : &nodes[it->second];
}

const TensorType* GraphView::Type(const std::string& tensor) const {
  auto it = types.find(tensor);
  return it == types.end() ? nullptr : &it->second;
}

std::optional<size_t> GraphView::FindNode(const std::string& name) const {
  if (!node_index.empty() || nodes.empty()) {
    auto it = node_index.find(name);
    if (it == node_index.end()) return std::nullopt;
    return it->second;
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return i;
  return std::nullopt;
}

namespace {

// Fills the view's initializer, input and output lists; returns the names
// available before any node runs (graph inputs and initializers).
std::unordered_set<std::string> ListGraphIo(const onnx::GraphProto& g, GraphView& view) {
  std::unordered_set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    view.initializers.push_back(t.name());
    initializers.insert(t.name());
  }
  std::unordered_set<std::string> available(initializers);
  for (const auto& v : g.input()) {
    available.insert(v.name());
    if (!initializers.contains(v.name())) view.inputs.push_back(v.name());
  }
  for (const auto& v : g.output()) view.outputs.push_back(v.name());
  return available;
}

// The graph's nodes in file order, each tensor with at most one writer.
struct FileNodes {
  std::vector<GraphNode> nodes;
  std::unordered_map<std::string, size_t> writer;  // tensor -> file index
};

Result<FileNodes> ReadFileNodes(const onnx::GraphProto& g, const std::vector<std::string>& names,
                                const std::unordered_set<std::string>& available) {
  FileNodes out;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    GraphNode node{names[i],
                   names[i] != n.name(),
                   n.op_type(),
                   n.domain() == "ai.onnx" ? "" : n.domain(),
                   {n.input().begin(), n.input().end()},
                   {n.output().begin(), n.output().end()},
                   ImplicitInputs(n),
                   static_cast<size_t>(i),
                   {}};
    for (const auto& entry : n.metadata_props()) node.metadata.emplace_back(entry.key(), entry.value());
    for (const auto& o : node.outputs) {
      if (o.empty()) continue;
      if (auto [it, fresh] = out.writer.emplace(o, i); !fresh)
        return InvalidArgument(
            fmt::format("nodes '{}' and '{}' both write tensor '{}'", names[it->second], node.name, o));
      if (available.contains(o))
        return InvalidArgument(
            fmt::format("node '{}' ({}) writes tensor '{}', which is a graph input or initializer", node.name,
                        node.op_type, o));
    }
    out.nodes.push_back(std::move(node));
  }
  return out;
}

// Kahn's algorithm; among ready nodes the earliest in the file goes first,
// so an already sorted model keeps its order. Appends to view.nodes.
Status SortNodes(const FileNodes& file, const std::unordered_set<std::string>& available, GraphView& view) {
  const auto& file_nodes = file.nodes;
  std::vector<int> missing(file_nodes.size(), 0);
  std::unordered_map<std::string, std::vector<size_t>> waiting;  // tensor -> file indices
  for (const auto& node : file_nodes) {
    auto deps = node.inputs;
    deps.insert(deps.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    for (const auto& in : deps) {
      if (in.empty() || available.contains(in)) continue;
      if (!file.writer.contains(in))
        return InvalidArgument(
            fmt::format("node '{}' ({}) reads tensor '{}' that no node, graph input or initializer produces",
                        node.name, node.op_type, in));
      ++missing[node.file_index];
      waiting[in].push_back(node.file_index);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < file_nodes.size(); ++i)
    if (missing[i] == 0) ready.push(i);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    view.nodes.push_back(file_nodes[i]);
    for (const auto& o : file_nodes[i].outputs)
      if (auto it = waiting.find(o); it != waiting.end())
        for (size_t j : it->second)
          if (--missing[j] == 0) ready.push(j);
  }
  if (view.nodes.size() != file_nodes.size()) {
    for (size_t i = 0; i < file_nodes.size(); ++i)
      if (missing[i] > 0)
        return InvalidArgument(fmt::format("the graph has a cycle through node '{}' ({})", file_nodes[i].name,
                                           file_nodes[i].op_type));
  }
  return {};
}

// Fills producer and consumers from the sorted nodes.
void IndexEdges(GraphView& view) {
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    view.node_index.try_emplace(view.nodes[i].name, i);
    for (const auto& o : view.nodes[i].outputs)
      if (!o.empty()) view.producer[o] = i;
    for (const auto& in : view.nodes[i].inputs)
      if (!in.empty()) {
        auto& c = view.consumers[in];
        if (c.empty() || c.back() != i) c.push_back(i);
      }
  }
}

// Types: declared ones first, inferred ones fill the gaps.
void CollectTypes(const Model& m, const GraphViewOptions& options, GraphView& view) {
  const auto& g = onnx_adapter::Proto(m).graph();
  const auto record = [&](const onnx::ValueInfoProto& v) {
    if (v.has_type() && !view.types.contains(v.name()))
      view.types.emplace(v.name(), onnx_adapter::TensorTypeFromProto(v.type()));
  };
  for (const auto& v : g.input()) record(v);
  for (const auto& v : g.output()) record(v);
  for (const auto& v : g.value_info()) record(v);
  for (const auto& t : g.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    view.types.emplace(t.name(), onnx_adapter::TensorTypeFromProto(type));
  }
  if (options.infer_shapes) {
    if (auto inferred = InferredStructure(m)) {
      for (const auto& v : onnx_adapter::Proto(*inferred).graph().value_info()) record(v);
    }
  }
}

}  // namespace

Result<GraphView> BuildGraphView(const Model& m, const GraphViewOptions& options) {
  if (!m.valid()) return InternalError("BuildGraphView on an empty model");
  const auto& g = onnx_adapter::Proto(m).graph();
  GraphView view;
  const auto available = ListGraphIo(g, view);
  PARITY_ASSIGN_OR_RETURN(const FileNodes file, ReadFileNodes(g, NodeNames(m), available));
  PARITY_RETURN_IF_ERROR(SortNodes(file, available, view));
  IndexEdges(view);
  CollectTypes(m, options, view);
  return view;
}

std::vector<IntermediateTensor> IntermediateTensors(const GraphView& g) {
  std::unordered_set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  // Constant: every input an initializer or a constant tensor; a node without
  // inputs only when it is a Constant (RandomNormal and the like are not).
  std::unordered_set<std::string> constants(g.initializers.begin(), g.initializers.end());
  std::vector<IntermediateTensor> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    bool constant = n.inputs.empty() ? (n.op_type == "Constant" && n.domain.empty()) : true;
    for (const auto& in : n.inputs) constant = constant && (in.empty() || constants.contains(in));
    for (const auto& in : n.implicit_inputs) constant = constant && constants.contains(in);
    for (const auto& o : n.outputs) {
      if (o.empty()) continue;
      if (constant) constants.insert(o);
      out.push_back({o, i, outputs.contains(o), constant});
    }
  }
  return out;
}

}  // namespace parity
