// Internal to src/onnx: parsing a .onnx file whose weights are stored inline
// (raw_data) without copying them into the parsed model.
//
// The main graph's large initializers become external-data references to the
// bytes where they already lie in the model's own file (location: the file's
// name, offset and length of the raw_data payload), so the model parity holds
// is the graph alone and ORT reads the weights from the file in place, as it
// does for a model saved with external data: one copy of the weights per
// session instead of the parsed model's plus ORT's own (issue 26: a 500 MB
// model's check held 4.8 GB).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parity::onnx_adapter {

// Parses `bytes`, the whole file that `location` names in its folder, leaving
// in the file every main-graph initializer whose raw_data holds at least
// `keep_from` bytes and exactly what its dims and dtype declare. Returns
// nullopt when none does, or when the file is not laid out as one graph of
// plain fields (a repeated graph field, groups, a tensor already external, a
// malformed field): the caller parses it whole, with its usual errors.
// protobuf's CodedInputStream walks the wire format (the byte offsets are
// what a plain parse does not give).
std::optional<onnx::ModelProto> ParseLeavingWeightsInFile(std::string_view bytes, const std::string& location,
                                                          int64_t keep_from);

}  // namespace parity::onnx_adapter
