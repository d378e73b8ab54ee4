// Reading ORT's session-creation log for what the graph optimizers did.
//
// ORT 1.29 logs, at INFO severity, one line per graph transformer application:
//   "GraphTransformer ConvActivationFusion modified: 1 with status: OK"
// Rule-based transformers appear under their container's name
// ("Level1_RuleBasedTransformer"); ORT does not log the individual rules.
// Pure string handling: no ORT types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::ort {

struct OptimizerEvent {
  std::string name;       // "ConvActivationFusion"
  bool modified = false;  // the transformer changed the graph
};

// Parses one "GraphTransformer <name> modified: <0|1> ..." line; nullopt for
// any other line.
std::optional<OptimizerEvent> ParseOptimizerLine(std::string_view line);

// Names of the optimizers that changed the graph, each once, in the order of
// their first change.
std::vector<std::string> ModifiedOptimizers(const std::vector<std::string>& lines);

}  // namespace parity::ort
