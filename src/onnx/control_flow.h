// Control flow (If, Loop) of a model's top-level graph made observable
// (docs/locate.md "Control flow"). ONNX Runtime shows nothing of what runs
// inside a body: only the If/Loop node's own outputs can be graph outputs.
// So parity derives, for one sample, a copy of the model without the bodies:
//
//   1. MakeControlFlowProbe: the model with what decides each top-level
//      If/Loop exposed (an If's condition; a Loop's iteration count, as an
//      extra scan output of its iteration number);
//   2. InlineControlFlow: each If replaced by the branch the sample takes,
//      each Loop unrolled into the iterations it ran.
//
// The copy computes what the model computes on that sample, and every body
// tensor is a top-level tensor that can be exposed, compared and located.
// Bodies nested in bodies come to the top level one round at a time
// (engine/run/flatten_control_flow.h repeats the two steps). Scan bodies are not
// inlined (a note says so).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "onnx/model.h"

namespace parity {

// Metadata written on every node an inlined body brings to the top level:
// the node's name in its body, and where that body was (for reports:
// "Loop 'loop' iteration 2", "If 'if_0' then_branch", nested ones joined by
// " in "). Inlined node names are the body node's name plus, in a Loop,
// "@<iteration>" (a node in iteration 2 of a loop nested in iteration 1 of
// another: "@1@2"); tensors in a Loop's body get the same suffix.
inline constexpr std::string_view kBodyNodeKey = "parity.body_node";
inline constexpr std::string_view kBodyOfKey = "parity.body_of";

// True when the top-level graph holds an If, Loop or Scan node.
bool HasControlFlow(const Model& m);

// Whether the then_branch (else_branch) of the If called `if_node` (its name
// in graph.h's naming at the top level, or its name in a body) computes no
// number of its own: every node of the branch, nested bodies included, only
// makes constants or reshapes what it is given (Constant, ConstantOfShape,
// Identity, Cast, Shape, Size, Reshape, Squeeze, Unsqueeze, Expand,
// Concat). torchvision's empty-boxes return in batched_nms is such a branch:
// no sample a check judges takes it, and no numeric fault can hide there.
// False when no such If is found.
bool BranchComputesNothing(const Model& m, std::string_view if_node, bool then_branch);

// What decides one control-flow node of the top-level graph on a sample.
struct ControlFlowProbe {
  std::string node;     // the node's name (graph.h's names)
  std::string op_type;  // "If", "Loop" or "Scan"
  // The node's name in its body and where that body was, when the node was
  // itself inlined from a body (kBodyNodeKey, kBodyOfKey); else node, "".
  std::string origin;
  std::string body_of;
  // The exposed tensor to read: If: its condition (one bool); Loop: one
  // int64 per iteration run. Empty for Scan (not probed).
  std::string tensor;
};

struct ProbeModel {
  Model model;  // the model with every probe tensor a graph output
  std::vector<ControlFlowProbe> probes;  // in file order
};

// The probe model of `m`. Each Loop stops after at most max_iterations + 1
// iterations there (a Loop that ran more is not unrolled anyway, and an
// INT64_MAX trip count must not hang the probe): a count of
// max_iterations + 1 means "more". Errors: kInvalidArgument for a
// control-flow node without its body attribute(s).
Result<ProbeModel> MakeControlFlowProbe(const Model& m, int64_t max_iterations = 64);

// What a sample decided for one node: If: 1 then_branch, 0 else_branch;
// Loop: the number of iterations it ran.
struct ControlFlowDecision {
  std::string node;
  int64_t value = 0;
};

struct InlineLimits {
  int64_t max_iterations = 64;  // a Loop that ran more stays a Loop
  size_t max_nodes = 50000;     // a Loop whose iterations would grow the graph beyond this stays a Loop
};

struct InlinedModel {
  Model model;
  size_t inlined = 0;  // control-flow nodes replaced
  // One line per control-flow node left as it was, saying why (its body is
  // not observed).
  std::vector<std::string> notes;
};

// `m` with each node named in `decisions` replaced by its taken branch or its
// unrolled iterations; nodes not named (and Scan nodes) are left as they
// are. Errors: kInvalidArgument when a decision names no control-flow node.
Result<InlinedModel> InlineControlFlow(const Model& m, const std::vector<ControlFlowDecision>& decisions,
                                       const InlineLimits& limits = {});

}  // namespace parity
