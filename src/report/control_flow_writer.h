// The control-flow part of check and locate reports (ControlFlowReport,
// engine/run/control_flow_report.h): JSON and console text.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/run/control_flow_report.h"

namespace parity {

// {"present", "samples", "ifs": [{"node", "then_samples", "else_samples"}],
//  "loops": [{"node", "ran_samples", "most_iterations"}], "notes": [...],
//  "unjudged": [...]}; where the judged samples are counted (check), each If
// also has "then_judged"/"else_judged", each Loop "ran_judged", and
// "judged_against" says against what. Null when the model has no control flow.
nlohmann::json ControlFlowToJson(const ControlFlowReport& r);

// Console lines: one per If ("If 'c': then_branch in 3 of 4 samples (1
// judged against PyTorch), else_branch in 1 (0 judged)"), one per Loop
// ("Loop 'l': body run by 2 of 4 samples (...), at most 3 iterations") and
// one per note, each after `indent`; nothing when the
// model has no control flow.
void PrintControlFlow(std::FILE* out, const ControlFlowReport& r, const char* indent);
std::string FormatControlFlow(const ControlFlowReport& r, const char* indent);

// The same as HTML: a <div id="control-flow"> with one line per If and per
// note; "" when the model has no control flow.
std::string ControlFlowHtml(const ControlFlowReport& r);

}  // namespace parity
