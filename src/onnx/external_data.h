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

// What ResolveExternalData found.
struct ExternalResolution {
  bool any = false;   // the model had external tensors
  bool kept = false;  // some stay references (to be read in place)
};

// Checks every external tensor of `model` (the same rules as
// InlineAllExternalData, the same bound on claims per file) and reads into
// memory all but the main graph's dense initializers of at least `keep_from`
// bytes, which stay references: their files are checked (confined, regular,
// the region inside the file, the length the dims declare), not read.
Result<ExternalResolution> ResolveExternalData(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                                               int64_t keep_from);

// The one bounded reader of a tensor that is still external: checks it again
// against `dir` (the model's canonical folder: the file may have changed since
// the load) and reads exactly its declared bytes.
Result<std::string> ReadExternalTensor(const onnx::TensorProto& t, const std::filesystem::path& dir);

// Reads every initializer of `graph` that is still external (relative to
// `dir`) into raw_data; for a copy that must stand alone.
Status InlineKeptExternalData(onnx::GraphProto& graph, const std::filesystem::path& dir);

// Marks `t` as external data at `location`, `offset`, `length` (its previous
// external_data entries replaced; raw_data is left to the caller).
void SetExternalData(onnx::TensorProto& t, const std::string& location, size_t offset, size_t length);

// Moves the raw_data of every tensor of at least `threshold` bytes into one
// blob (each tensor 4096-aligned) and rewrites the tensors to reference
// `location` with offset/length. Returns the blob.
Result<std::string> MoveToExternalData(onnx::GraphProto& graph, const std::string& location,
                                       int64_t threshold);

}  // namespace parity::onnx_adapter
