// Internal to src/onnx: ModelBuilder's state.
#pragma once

#include <onnx/onnx_pb.h>

#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "onnx/builder.h"

namespace parity {

struct ModelBuilder::Impl {
  onnx::GraphProto graph;
  std::mt19937 rng;
  std::vector<std::string> scopes;
  std::unordered_set<std::string> tensor_names;
  std::unordered_set<std::string> node_names;
  std::vector<std::string> outputs;
};

}  // namespace parity
