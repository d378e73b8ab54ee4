// Which nodes of ORT's optimized graph replace which nodes of the original
// graph (docs/contract.md (""fused node""), "surviving tensor").
//
// Both graphs are parity GraphViews: the original model's and the one ORT
// saved after optimizing it (com.microsoft / com.microsoft.nchwc nodes; build
// its view with infer_shapes=false). The mapping works on tensor names only:
//   - layout first (layout_alias.h): each tensor of ORT's NCHWc layout that
//     holds an original tensor in blocked form is renamed to it and the
//     reorders left out, so every nchwc node is a region of its own, covering
//     the original node(s) it computes (a Conv, with the Add and Relu ORT
//     folded into it); an inferred alias whose region does not read exactly
//     what its covered nodes read from outside is dropped (its nodes then
//     join their neighbours' region, as without aliases);
//   - surviving tensors: node outputs of the original graph that some node of
//     the optimized graph also produces (graph inputs are not node outputs);
//   - regions: optimized nodes connected through non-surviving tensors (an
//     output of one read by another) form one region (union-find): a region of
//     several nodes is where ORT really fuses (or where a layout alias could
//     not be told);
//     initializers are constants, never boundaries (BN folding and constant
//     folding rename them);
//   - a region's outputs are its surviving tensors; its covered original
//     nodes are found by walking back in the ORIGINAL graph from those
//     outputs, through every tensor that did not survive, stopping at
//     surviving tensors, graph inputs and initializers; the tensors the walk
//     stops at (not initializers) are the region's `boundary` inputs, from
//     which the covered nodes compute the outputs (what ExtractRegion needs);
//   - a region of one node with the op type, domain and outputs of the one
//     original node it covers is `unchanged`, not fused.
// Pure computation over names; thread-compatible.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/graph.h"

namespace parity {

struct FusedRegion {
  std::vector<std::string> nodes;     // optimized node names, in optimized topological order
  std::vector<std::string> op_types;  // parallel to `nodes`
  std::vector<std::string> domains;   // parallel to `nodes` ("" = ai.onnx)
  std::vector<std::string> outputs;   // surviving tensors it produces, original topological order
  std::vector<std::string> inputs;    // surviving tensors / graph inputs the optimized nodes read
  std::vector<std::string> boundary;  // where the original walk stopped (no initializers), in order found
  std::vector<std::string> covers;    // original node names, original topological order
  bool unchanged = false;             // one node identical to the one original node it covers
  size_t first_original_index = 0;    // smallest original topological index among `covers`

  // "Conv" for one node; "ReorderInput+Conv+ReorderOutput" for several.
  std::string OpSummary() const;
  // The main node: the first that computes (not a Reshape, Transpose or NCHWc reorder).
  size_t MainNode() const;
};

struct FusionMap {
  // Surviving node outputs, in the original graph's topological order.
  std::vector<std::string> surviving;
  // Regions in the order of their first covered original node.
  std::vector<FusedRegion> regions;
  // Original node outputs that did not survive, with the region whose walk
  // covered their producer (index into `regions`; -1 when none did: a dead
  // or constant-folded branch).
  std::unordered_map<std::string, int> fused_away;
  // Surviving tensor -> index of the region producing it.
  std::unordered_map<std::string, size_t> region_of_output;
  // Surviving tensors the optimized graph holds only in another layout
  // (layout_alias.h): original tensor -> the blocked tensor holding it. Reading
  // one from the optimized model itself needs ORT's reorder back
  // (onnx/edit.h WithLayoutReorders).
  std::unordered_map<std::string, std::string> layout_sources;

  // Fused regions (those not `unchanged`).
  std::vector<const FusedRegion*> Fused() const;
  // The region producing `tensor`, or null.
  const FusedRegion* RegionOf(const std::string& tensor) const;
  bool IsSurviving(const std::string& tensor) const { return region_of_output.contains(tensor); }
};

// Never fails: unknown structure only makes regions larger. Precondition:
// both views were built from valid models.
FusionMap BuildFusionMap(const GraphView& original, const GraphView& optimized);

// A region's identity for comparing two plans of one model: op types and
// domains of its nodes and its outputs ("Conv|com.microsoft.nchwc -> y1,y2").
std::string RegionSignature(const FusedRegion& region);

}  // namespace parity
