// What a target is judged against, instead of branching on strings. `check`
// takes one for ORT (a config or a model) and one for PyTorch (a dump);
// `locate` parses its --reference into one, and its report says the kind.
//
//   kConfig     the same model under another config (--reference disable,
//               a level, CONFIG.json); the default: disable.
//   kModel      a reference model the target was derived from (check
//               --reference-model, locate's MODEL with --target-model), run
//               under `config`.
//   kBaseline   a saved unfused baseline directory (parity baseline).
//   kTorchDump  a PyTorch dump directory (--reference torch:DIR, check
//               --torch); the export is judged unfused (`config` disable).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/run_config.h"
#include "core/status.h"

namespace parity {

struct Reference {
  enum class Kind { kConfig, kModel, kBaseline, kTorchDump };
  Kind kind = Kind::kConfig;
  RunConfig config;            // the config the reference runs under (default: disable)
  std::filesystem::path path;  // kModel: the .onnx; kBaseline, kTorchDump: the directory; else empty

  bool is_torch() const { return kind == Kind::kTorchDump; }
  // The reference model's file (kModel), else null: the reference runs the
  // target's own model. Callers load it instead of asking for the kind.
  const std::filesystem::path* model_file() const { return kind == Kind::kModel ? &path : nullptr; }
  // The PyTorch dump folder (kTorchDump), else null.
  const std::filesystem::path* torch_dump() const { return kind == Kind::kTorchDump ? &path : nullptr; }
};

// The one place a command learns which reference kinds it can run (the
// branches on the kind live here and in the runners: tests/house counts them
// elsewhere). `command` names the caller in the error ("check", "check
// --dataset"). kInvalidArgument naming the kind, else OK.
//   RequireOrtReference  a config or a model, run in ORT;
//   RequireTorchDump     a PyTorch dump (`what`: "the PyTorch reference").
Status RequireOrtReference(const Reference& r, std::string_view command);
Status RequireTorchDump(const Reference& r, std::string_view command, std::string_view what);
// "model:PATH [label]" or "onnx:label" (a dataset report's reference).
std::string ReferenceLabel(const Reference& r);

// "config", "model", "baseline", "torch" (locate's report: reference.kind).
std::string_view ReferenceKindName(Reference::Kind kind);

// Parses the --reference option: "torch:DIR" (a PyTorch dump), an
// optimization level ("disable", "basic", "extended", "all"), or a config
// JSON file, read as a stored config (it may not name files to write:
// docs/security.md). Errors (kInvalidArgument, with the context
// `option`): "torch:" without a directory; an unreadable or invalid config
// file (LoadRunConfig's error).
Result<Reference> ParseReference(std::string_view spec, std::string_view option = "--reference");

}  // namespace parity
