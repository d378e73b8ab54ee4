// What a model says about one of its inputs or outputs, and the check of
// user-given input tensors against it. Plain parity types; no ORT.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity::ort {

struct TensorInfo {
  std::string name;
  bool is_tensor = true;               // false for sequence, map and optional values
  int onnx_type = 0;                   // ONNX TensorProto.DataType number; 0 when not a tensor
  std::optional<DType> dtype;          // nullopt: not a tensor, or a type parity lacks (complex, float8)
  bool rank_known = true;              // false when the model gives no shape at all (then `shape` is empty)
  Shape shape;                         // -1 for a dynamic dimension
  std::vector<std::string> dim_names;  // per dimension: its symbolic name, "" when fixed or unnamed

  // "float32 [batch, 3, 224, 224]"; an unnamed dynamic dim prints as "?",
  // an unknown rank as "[...]".
  std::string ToString() const;
  std::string ShapeString() const;  // "[batch, 3, 224, 224]"
};

// Checks `given` against a model's inputs: every input present, no unknown
// names, matching dtype, rank and fixed dimensions (rank and dimensions only
// where the model states them). Collects every finding
// and returns one kInvalidArgument error whose single-line message lists them
// ("input 'x': expected float32, given int64; missing input 'mask' ...").
Status CheckInputs(const std::vector<TensorInfo>& model_inputs, const TensorSet& given);

}  // namespace parity::ort
