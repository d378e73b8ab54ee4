// Which original tensor each tensor of a layout transform holds (issue 53
// item 2), so that a layout-converted graph maps node by node.
//
// At `all` on x86, ORT's NCHWc transformer (NchwcTransformer) rewrites a CNN
// trunk into com.microsoft.nchwc nodes that pass blocked tensors
// (`reorder_token_N`: channels in blocks of 8 on AVX2, 16 on AVX-512) from
// one to the next. No original tensor name survives between them, so by
// names alone the whole trunk is one region. Yet each blocked tensor holds,
// in another layout, the value of one original tensor; the plan says which:
//   - ReorderOutput(t) -> o: t holds o (certain);
//   - ReorderInput(x) -> t: t holds x (certain);
//   - a node ORT made for one node of its graph is named after that node's
//     output tensor (`<tensor>_nchwc`, `_token_K` appended by ORT when the
//     name was taken): its output holds that tensor, carried forward over
//     the nodes ORT folds into it afterwards: at most one Add/Sum (only when
//     the node reads a fourth, Sum, input) and then one activation (Relu,
//     Clip, Sigmoid, Tanh, LeakyRelu, HardSigmoid), each the one reader of
//     the tensor before it, absent from the plan by name, its output neither
//     produced by the plan nor claimed by another node's name (inferred);
//   - a node the transform kept with blocked inputs (an Add, a Concat, an
//     activation) keeps its original name, op type and output count: its
//     outputs hold that node's outputs (inferred).
// An inferred alias is only a claim: BuildFusionMap keeps it only where the
// node it splits off reads exactly the tensors its covered original nodes
// read from outside (fusion_map.h), so a wrong one falls back to a region.
//
// The block size never enters: the aliases are names, and the values are
// read after ORT's own ReorderOutput (an aliased tensor exposed as an output
// makes ORT reorder it; the fallback inserts the same node, onnx/edit.h
// WithLayoutReorders), so AVX2 and AVX-512 machines map and compare alike.
// Pure computation over names; thread-compatible.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "onnx/graph.h"

namespace parity {

struct LayoutAliases {
  // Blocked tensor of the optimized graph -> the original tensor it holds.
  std::unordered_map<std::string, std::string> of_blocked;
  // The blocked tensors whose alias was inferred (not read off a reorder).
  std::unordered_set<std::string> inferred;

  bool empty() const { return of_blocked.empty(); }
};

// The aliases of `optimized`'s tensors that are not original tensors (see
// above). Empty for a plan without layout-converted nodes.
LayoutAliases FindLayoutAliases(const GraphView& original, const GraphView& optimized);

// `optimized` with every aliased tensor renamed to the original tensor it
// holds, and the reorders that then map a tensor onto itself left out (they
// move data, they compute nothing). Indices rebuilt; types of renamed
// tensors dropped (a blocked shape is not the original's).
GraphView AliasedView(const GraphView& optimized, const LayoutAliases& aliases);

}  // namespace parity
