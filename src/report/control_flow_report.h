// The control-flow part of check and locate reports (ControlFlowReport,
// engine/run/control_flow_report.h): JSON and console text.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/run/control_flow_report.h"

namespace parity {

// {"present", "samples", "ifs": [{"node", "then_samples", "else_samples"}],
//  "notes": [...]}; null when the model has no control flow.
nlohmann::json ControlFlowToJson(const ControlFlowReport& r);

// Console lines: one per If ("If 'c': then_branch in 3 of 4 samples,
// else_branch in 1") and one per note, each after `indent`; nothing when the
// model has no control flow.
void PrintControlFlow(std::FILE* out, const ControlFlowReport& r, const char* indent);
std::string FormatControlFlow(const ControlFlowReport& r, const char* indent);

// The same as HTML: a <div id="control-flow"> with one line per If and per
// note; "" when the model has no control flow.
std::string ControlFlowHtml(const ControlFlowReport& r);

}  // namespace parity
