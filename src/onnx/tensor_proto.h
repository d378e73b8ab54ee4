// ONNX TensorProto `.pb` files (the layout of ONNX's own test data,
// `test_data_set_N/input_0.pb`) <-> parity Tensors.
//
// Reading supports raw_data and the typed fields (float_data; int32_data for
// int8/16, uint8/16, bool, float16 and bfloat16 bits; int64_data; double_data;
// uint64_data for uint32/64; string_data). Sizes are checked before anything
// is allocated. Complex, float8 and other types parity has no DType for give
// kUnsupported; anything malformed gives kInvalidArgument/kCorrupt naming the file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// Reads one TensorProto file. When `name_out` is not null it receives the
// proto's `name` field (possibly empty).
Result<Tensor> ReadTensorProtoFile(const std::filesystem::path& path, std::string* name_out = nullptr);

// Writes `tensor` as a TensorProto named `name` (raw_data, or string_data for
// strings), atomically: the file is whole or untouched.
Status WriteTensorProtoFile(const std::filesystem::path& path, const std::string& name, const Tensor& tensor);

struct TestDataSet {
  TensorSet inputs;
  TensorSet outputs;
};

// Reads an ONNX test data directory (`input_0.pb`, `input_1.pb`, ...,
// `output_0.pb`, ...). Each tensor is named by the proto's `name` field, else
// by its position in `input_names`/`output_names` (the model's order). Errors
// when a file fails to read or a tensor can be named neither way.
Result<TestDataSet> ReadTestDataSet(const std::filesystem::path& dir,
                                    const std::vector<std::string>& input_names,
                                    const std::vector<std::string>& output_names);

}  // namespace parity
