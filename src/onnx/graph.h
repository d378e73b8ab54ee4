// parity's own protobuf-free view of a model's top-level graph, used by
// baseline and locate: nodes in topological order, who produces and who
// consumes each tensor, and what is known of each tensor's type.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "onnx/model.h"
#include "onnx/tensor_type.h"

namespace parity {

struct GraphNode {
  // The node's name; when the model leaves it empty or repeats it, a unique
  // one is made: "<op_type>_<index in the file>" (plus "_<n>" on collision).
  // edit.h's WithNodeNames writes these names into a model.
  std::string name;
  bool name_synthesized = false;
  std::string op_type;
  std::string domain;                // "" for the default ONNX domain
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  // Outer-scope tensors read by the node's subgraphs (If/Loop/Scan bodies).
  std::vector<std::string> implicit_inputs;
  size_t file_index = 0;  // position in the model file's node list
  // The node's metadata_props (IR 10), in file order: torch's dynamo exporter
  // records the module a node came from under "pkg.torch.onnx.name_scopes",
  // "pkg.torch.onnx.class_hierarchy", "pkg.torch.onnx.fx_node", ...
  std::vector<std::pair<std::string, std::string>> metadata;

  // The value of metadata entry `key`, or null.
  const std::string* Metadata(std::string_view key) const;
};

struct GraphView {
  std::vector<GraphNode> nodes;                      // topological order, stable w.r.t. the file order
  std::unordered_map<std::string, size_t> producer;  // tensor -> index in nodes
  std::unordered_map<std::string, std::vector<size_t>> consumers;  // tensor -> indices in nodes
  std::vector<std::string> inputs;        // graph inputs that are not initializers, in order
  std::vector<std::string> initializers;  // in file order
  std::vector<std::string> outputs;       // graph outputs, in order
  // Types from graph inputs/outputs, value_info and (when asked) shape inference.
  std::unordered_map<std::string, TensorType> types;

  const GraphNode* Producer(const std::string& tensor) const;
  const TensorType* Type(const std::string& tensor) const;
  std::unordered_map<std::string, size_t> node_index;  // node name -> index in nodes (first of a name)
  // Index in `nodes` of the node called `name` (hashed through node_index;
  // a view built by hand without it is scanned).
  std::optional<size_t> FindNode(const std::string& name) const;
};

struct GraphViewOptions {
  // Run ONNX shape inference on a copy to learn intermediate types. Failure
  // of shape inference is not an error: the types are then partial.
  bool infer_shapes = true;
};

// Errors (kInvalidArgument): a node reads a tensor nothing produces ("node
// 'N' (Op) reads tensor 'T' that ..."), two nodes write one tensor, or the
// nodes form a cycle (naming a node on it).
Result<GraphView> BuildGraphView(const Model& m, const GraphViewOptions& options = {});

struct IntermediateTensor {
  std::string name;
  size_t producer = 0;  // index in GraphView::nodes
  bool is_graph_output = false;
  // Computed from initializers and Constant nodes alone: no graph input
  // reaches it (a weight's Transpose, a reshaped constant); the same value
  // for every sample.
  bool constant = false;
};

// Every non-empty node output in topological order (each node's outputs in
// their order), graph outputs and constants included and flagged: what
// baseline observes.
std::vector<IntermediateTensor> IntermediateTensors(const GraphView& g);

// The names GraphView gives the nodes of `m`, in file order (see GraphNode::name).
std::vector<std::string> NodeNames(const Model& m);

}  // namespace parity
