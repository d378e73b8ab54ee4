// Internal to src/onnx: ONNX external data (tensors whose bytes live in a
// side file, `data_location == EXTERNAL`, keys location/offset/length).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

#include "core/status.h"

namespace parity::onnx_adapter {

// Reads every external tensor of `graph` (recursively) into raw_data.
// Returns whether there was any. `base_dir` is the model's directory; an
// empty base_dir with external tensors present is an error (kUnsupported).
// Locations must be relative and stay inside base_dir.
//
// Untrusted locations (docs/security.md): after resolving symlinks the file
// must lie inside base_dir (resolved too) and be a regular file; sparse
// tensors (initializers and attributes) are inlined like dense ones, so ORT
// never resolves a location itself. Memory is bounded by what is on disk:
// the tensors that read one file may together claim at most that file's
// size (600 tensors naming one 16 MiB region are refused, not read 600 times).
Result<bool> InlineAllExternalData(onnx::GraphProto& graph, const std::filesystem::path& base_dir);
// The same over the model's graph and its functions' nodes.
Result<bool> InlineAllExternalData(onnx::ModelProto& model, const std::filesystem::path& base_dir);

// Moves the raw_data of every tensor of at least `threshold` bytes into one
// blob (each tensor 4096-aligned) and rewrites the tensors to reference
// `location` with offset/length. Returns the blob.
Result<std::string> MoveToExternalData(onnx::GraphProto& graph, const std::string& location,
                                       int64_t threshold);

}  // namespace parity::onnx_adapter
