// The control-flow part of a report (check, locate): plain data, filled by
// engine/run/flatten_control_flow.h, written by report/control_flow_writer.h and the
// console writers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parity {

// What the reports say of a model's control flow: which branches the samples
// took per If (an If nested in a Loop counts for a sample when any iteration
// took the branch), and every body left unobserved.
struct IfCoverage {
  std::string node;  // the If's name in its body or in the model
  int then_samples = 0;
  int else_samples = 0;
  // Of those, the samples whose values were judged (a check: against
  // PyTorch with a dump, else against the reference); ControlFlowReport's
  // judged_against says against what, and is empty where none are counted
  // (locate, baseline).
  int then_judged = 0;
  int else_judged = 0;
};
// Which samples ran a Loop's body (at least one iteration); an inner Loop
// counts for a sample when any iteration of the outer one ran it.
struct LoopCoverage {
  std::string node;  // the Loop's name in its body or in the model
  int ran_samples = 0;    // probed samples that ran its body
  int ran_judged = 0;     // judged samples that ran its body (as IfCoverage)
  int64_t most_iterations = 0;  // over the probed samples
};
struct ControlFlowReport {
  bool present = false;  // the model has If, Loop or Scan nodes
  int samples = 0;       // samples probed
  std::vector<IfCoverage> ifs;     // in order of first appearance
  std::vector<LoopCoverage> loops;  // in order of first appearance
  // "PyTorch" or "the reference" when the judged counts are filled (check);
  // "" otherwise.
  std::string judged_against;
  std::vector<std::string> notes;  // bodies not observed, branches no sample took
  // Branches no *judged* sample took, Loops no judged sample ran the body of ("the else branch of If 'cond'"): with
  // a PyTorch dump, judged against PyTorch; else against the ORT reference
  // (check_control_flow.cc). The check is then NOT JUDGED (CheckCoverage).
  std::vector<std::string> unjudged;
};

}  // namespace parity
