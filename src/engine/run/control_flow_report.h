// The control-flow part of a report (check, locate): plain data, filled by
// engine/run/control_flow.h, written by report/control_flow_json.cc and the
// console writers.
#pragma once

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
};
struct ControlFlowReport {
  bool present = false;  // the model has If, Loop or Scan nodes
  int samples = 0;       // samples probed
  std::vector<IfCoverage> ifs;     // in order of first appearance
  std::vector<std::string> notes;  // bodies not observed, branches no sample took
  // Branches no *judged* sample took ("the else branch of If 'cond'"): with
  // a PyTorch dump, judged against PyTorch; else against the ORT reference
  // (check_control_flow.cc). The check is then NOT JUDGED (CheckCoverage).
  std::vector<std::string> unjudged;
};

}  // namespace parity
