// What a model declares about itself, for `parity inspect` and the syntax and
// signature stages of `parity check`. Pure reading; never fails.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx/model.h"
#include "onnx/tensor_type.h"

namespace parity {

struct ValueInfo {
  std::string name;
  TensorType type;
};

struct OpCount {
  std::string domain;  // "" for the default ONNX domain
  std::string op_type;
  int64_t count = 0;
};

struct ModelInfo {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::vector<ValueInfo> inputs;   // graph inputs that are not initializers, in order
  std::vector<ValueInfo> outputs;  // in order
  std::vector<OpCount> op_counts;  // top-level graph, sorted by domain then op_type
  int64_t node_count = 0;          // top-level graph
  int64_t initializer_count = 0;
  int64_t initializer_bytes = 0;  // data bytes (strings: their lengths)

  // The default-domain opset, 0 when the model imports none.
  int64_t default_opset() const;
};

// Precondition: m.valid().
ModelInfo Inspect(const Model& m);

}  // namespace parity
