// --repro DIR: the minimal reproduction of a culprit, a directory a user can
// hand to someone else (onnxruntime#22177):
//   model.onnx         the culprit's region cut from the (reference) model
//   target_model.onnx  the same region cut from the --target-model, if any
//   inputs.npz         the reference values of the region's inputs
//   expected.npz       the region's outputs under the reference config
//   actual.npz         the region's outputs under the target config
//   target.json        the target config (reference.json when not `disable`)
//   README.md          the single `parity locate` command that shows the mismatch
// Every file is written whole (atomic); the directory is created if needed.
// It must be new, empty or an earlier repro (core/output_dir.h, marker kind
// kReproKind): a folder of the user's own files is refused, never overwritten.
#pragma once

#include <filesystem>
#include <string>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/locate/local_error.h"
#include "engine/locate/locate_result.h"

namespace parity {

struct ReproContent {
  const RegionModels* region = nullptr;
  const RegionRun* run = nullptr;
  const LocateCulprit* culprit = nullptr;
  RunConfig reference;
  RunConfig target;
  bool separate_target_model = false;
  std::string source_model;  // the model it was cut from, for the README
  std::string extra_flags;   // appended to the README's command (two runtimes: both libraries)
  std::string readme_extra;  // appended to the README (two runtimes: both versions)
};

inline constexpr std::string_view kReproKind = "parity.repro";

// Every file a repro folder may hold besides the marker.
inline constexpr std::string_view kReproFiles[] = {"model.onnx",   "target_model.onnx", "inputs.npz",
                                                   "expected.npz", "actual.npz",        "target.json",
                                                   "reference.json", "README.md"};

// Whether `dir` may receive the repro (core/output_dir.h): new, empty, or an
// earlier repro holding nothing but its own files. Touches nothing; `locate`
// calls it before it runs.
Status CheckReproDir(const std::filesystem::path& dir);

// Writes the repro into a staging folder beside `dir` and puts it in place
// whole (core/staged_dir.h): an error or an interrupt before that leaves
// `dir` exactly as it was and no staging folder behind.
Status WriteRepro(const std::filesystem::path& dir, const ReproContent& content);

}  // namespace parity
