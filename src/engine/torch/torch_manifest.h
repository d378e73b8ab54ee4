// INTERNAL to src/engine/torch/torch_dump*: a PyTorch dump's manifest.json
// (docs/contract.md "Files") parsed into a TorchDump. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "engine/torch/torch_dump.h"

namespace parity {

// The TorchDump the manifest `text` (read from `path`) describes; dir and
// allow_symlinks are left unset (the loader's). kInvalidArgument for text
// that is not JSON or over the parse budget (core/json_in.h), and, naming
// `path` and the key path (`layers[3].shape: ...`), for a missing key, a
// value of the wrong type, a file outside the dump folder, an unknown dtype,
// a schema other than kTorchDumpSchema, two samples of one name, or no
// output at all.
Result<TorchDump> ParseTorchManifest(std::string_view text, const std::string& path);

}  // namespace parity
