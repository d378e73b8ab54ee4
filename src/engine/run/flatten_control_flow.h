// A model's If/Loop bodies made observable for one sample (onnx/control_flow.h;
// docs/locate.md "Control flow"): the observation copy baseline, locate and
// check work on when a model has control flow. The copy computes what the
// model computes on that sample; the verdicts on the model's outputs stay the
// model's own.
#pragma once

#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/run/control_flow_report.h"
#include "onnx/control_flow.h"
#include "onnx/model.h"

namespace parity {

// The branch one If took on the sample (an If nested in a Loop's body: once
// per iteration that reached it).
struct BranchTaken {
  std::string node;     // the If's name in its body (its name in the model when at the top level)
  std::string body_of;  // where that body was, "" at the top level
  bool then_branch = true;
};

// How many iterations one Loop ran on the sample (a Loop nested in a
// Loop's body: once per iteration that reached it).
struct LoopRan {
  std::string node;     // as BranchTaken's
  std::string body_of;
  int64_t iterations = 0;  // InlineLimits::max_iterations + 1 means more
};

struct FlatModel {
  Model model;           // the observation copy (the model itself, cloned, without control flow)
  bool changed = false;  // some body was inlined
  std::vector<BranchTaken> branches;
  std::vector<LoopRan> loops;
  // One line per body left unobserved and why (a Loop past the unroll
  // limit, a Scan, nesting beyond the rounds).
  std::vector<std::string> notes;
  int sessions = 0;  // probe sessions created
};

struct FlattenOptions {
  RunConfig probe;  // the config the probe runs under (default: disable on CPU)
  InlineLimits limits;
  int max_rounds = 8;  // levels of nesting brought up
  // Run the copy once and compare its outputs bitwise with the model's (a
  // note where they differ); off where only the branches are wanted.
  bool check_copy = true;
  double timeout_s = 0;  // > 0: each probe run is stopped past it (an error, ort::IsRunTimeout)
};

// The observation copy of `model` for `sample`: round by round, the probe
// model runs on the sample and the If/Loop nodes at the top level are
// inlined, until none is left or a round inlines nothing; then the copy
// runs once and its outputs are compared with the model's (check_copy). A model without
// control flow comes back cloned, `changed` false, without a run. `label`
// names the model in errors. Errors: the probe run's (a sample the model
// refuses).
Result<FlatModel> FlattenForSample(const Model& model, const Sample& sample, const std::string& label,
                                   const FlattenOptions& options = {});

// Counts one sample's branches, Loops and notes into `report`; `judged`:
// the sample's values were judged (the judged counts grow too).
void AddSample(ControlFlowReport& report, const FlatModel& flat, bool judged = false);
// Adds a note per If branch no sample took ("If 'c': no sample took its
// else_branch; a fault there cannot show"). Call once, after the samples.
void NoteUntakenBranches(ControlFlowReport& report);

// "node 'Mul' in Loop 'loop' iteration 2" for a node of an observation copy
// that came from a body (its metadata, kBodyNodeKey / kBodyOfKey), "" for
// the others (the nodes parity adds to hand a Loop's results out included).
std::string BodyNodeDescription(const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace parity
