// The unfused baseline (docs/contract.md (""Files""), seed 002 layout): every observed
// tensor of a model run at `disable`, written as .npy files with a manifest
// that says what each file is and how it was made, and checked while it is
// written; and the verification of such a directory later.
//
// Layout of DIR (one sample: the files directly in DIR; several: one
// sub-directory per sample, named after the sample, manifest.json in DIR):
//   input.npy | input_<name>.npy         the sample's inputs
//   layer_<NNNN>_<name>.npy              observed intermediates, topological order
//   output.npy | output_<name>.npy       the model's outputs
//   manifest.json                        schema "parity.baseline/1", docs/baseline.md
// <name> is the tensor name with every character outside [A-Za-z0-9._-]
// replaced by '_' (made unique with "_<n>" when two names collide); NNNN is
// the index among the observed layers, zero-padded to 4 digits (more when
// there are more than 9999).
//
// Checks made while writing (recorded in the manifest):
//   determinism  the model runs twice; a tensor whose bytes differ between
//                the runs is named (the second run only hashes, it keeps
//                nothing);
//   NaN / Inf    counted per tensor; the first tensor (in file order) where
//                each appears is named;
//   scale        a tensor whose largest finite |value| exceeds
//                kScaleFactor * max(1, largest finite |input|) is flagged as
//                far outside the inputs' scale.
//
// Memory (docs/baseline.md "Memory"): the budget is the process's whole
// resident set. What the process already holds when tracing starts (measured:
// the runtime, the model, the inputs) and what one run costs besides the
// observed tensors (PlanBaselineMemory) come off first; the observed tensors
// go in batches (engine/run/trace.h) of at most a third of the rest, each written
// before the next batch runs. A budget that cannot hold the largest observed
// tensor that way is refused (kInvalidArgument naming the minimum).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_sets.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/run/control_flow_report.h"

namespace parity {

inline constexpr double kScaleFactor = 1e4;
inline constexpr std::string_view kBaselineSchema = "parity.baseline/1";

// `name` with characters outside [A-Za-z0-9._-] replaced by '_'; "_" when empty.
std::string SanitizeFileName(std::string_view name);

// Default --max-memory: a quarter of physical memory, at most 4 GiB.
int64_t DefaultBaselineMemory();
// Default --max-memory for a model of `weight_bytes` of initializers: the
// default above, raised to twice the weights plus 1 GiB (room for a model
// whose weights alone pass 4 GiB), never above three quarters of physical
// memory.
int64_t DefaultBaselineMemory(int64_t weight_bytes);
// Parses "512M", "2G", "1.5GiB", "1048576" (bytes). kInvalidArgument otherwise.
Result<int64_t> ParseMemorySize(std::string_view text);

// ORT's cost per session besides the model's initializers (kernels, the
// graph, thread pools, the library's pages touched by a run).
inline constexpr int64_t kSessionOverheadBytes = int64_t{32} << 20;
// Resident bytes per observed byte in a batch run: ORT's arena buffer, parity's
// copy, and the arena's rounding.
inline constexpr int64_t kBatchCostFactor = 3;

struct MemoryPlanInput {
  int64_t limit_bytes = 0;             // --max-memory
  int64_t resident_bytes = 0;          // the process's resident set when tracing starts
  int64_t initializer_bytes = 0;       // the model's weights
  int64_t output_bytes = 0;            // the model's outputs, one sample
  int64_t largest_bytes = 0;           // the largest tensor of a run (inputs, layers, outputs)
  int64_t largest_observed_bytes = 0;  // the largest observed layer
  // The weights are external data read in place (Model::external_data_dir):
  // ORT holds the one copy, parity none.
  bool weights_read_in_place = false;
};
struct MemoryPlan {
  int64_t reserved_bytes = 0;  // one run besides the observed tensors
  int64_t batch_bytes = 0;     // estimated observed bytes per batch
};
// reserved = 2 * initializers (1 * when read in place) + kSessionOverheadBytes + 2 * outputs + 2 * largest;
// batch = (limit - resident - reserved) / kBatchCostFactor. Errors:
// kInvalidArgument when batch < the largest observed layer, naming the
// smallest limit that would work.
Result<MemoryPlan> PlanBaselineMemory(const MemoryPlanInput& in);

struct TensorStats {
  int64_t count = 0;
  int64_t nan = 0;
  int64_t inf = 0;
  // Over the finite elements (0 when there are none); std is the population std.
  double min = 0, max = 0, mean = 0, std = 0;
  double max_abs = 0;
};
// One pass; strings give only the count.
TensorStats ComputeStats(const Tensor& t);

struct BaselineOptions {
  RunConfig config;  // opt_level disable by default, as the baseline is unfused
  // Peak memory budget; 0: DefaultBaselineMemory().
  int64_t max_memory_bytes = 0;
  // Keep only the layers whose producer's op type equals an entry, or whose
  // tensor or producer name matches an entry as a glob. Empty: every layer.
  std::vector<std::string> only;
  // Observed bytes per batch instead of what the budget leaves (tests); 0: planned.
  int64_t batch_bytes = 0;
  bool check_determinism = true;  // run twice
  bool overwrite = false;         // replace an earlier baseline in DIR
};

// What a baseline file holds. The manifest writes the names "input",
// "layer", "output" (FileRoleName) and reads them back (FileRoleFromName:
// kCorrupt for any other name).
enum class FileRole { kInput, kLayer, kOutput };
std::string_view FileRoleName(FileRole role);
Result<FileRole> FileRoleFromName(std::string_view name);

struct BaselineFile {
  std::string file;  // relative to DIR
  std::string tensor;
  FileRole role = FileRole::kLayer;
  int64_t index = -1;  // layers: NNNN
  std::string producer, op_type;  // empty for inputs
  std::string dtype;
  Shape shape;
  std::string sha256;  // of the file
  int64_t bytes = 0;   // file size
  TensorStats stats;
  bool deterministic = true;
  bool out_of_scale = false;
};

struct BaselineSample {
  std::string name;
  std::string dir;  // relative to DIR: "" or the sample name
  std::vector<BaselineFile> files;
  std::optional<std::string> first_nan, first_inf;  // tensor names
  std::vector<std::string> nondeterministic, out_of_scale;
  double input_scale = 0;  // largest finite |input|
};

struct BaselineResult {
  std::filesystem::path dir;
  nlohmann::json manifest;  // as written
  std::vector<BaselineSample> samples;
  size_t batches = 0;
  int64_t batch_bytes_limit = 0;
  int64_t resident_bytes = 0;  // when tracing started
  int64_t reserved_bytes = 0;  // for one run besides the observed tensors
  // A model with If/Loop/Scan: each sample's layers are those of its
  // observation copy (engine/run/flatten_control_flow.h), body tensors included;
  // the branches the samples took and the bodies left unobserved.
  ControlFlowReport control_flow;
  bool deterministic() const;
};

// Writes the baseline of the model at `model_path` for every sample of
// `inputs_path` into `dir` (created). Errors: kInvalidArgument when `dir` is
// not empty (unless overwrite) or the inputs do not fit the model; the
// model's, the inputs' and the run's errors; write errors name the file.
// A failure leaves no manifest.json in `dir`.
Result<BaselineResult> WriteBaseline(const std::filesystem::path& model_path,
                                     const std::filesystem::path& inputs_path, const std::filesystem::path& dir,
                                     const BaselineOptions& options);

// What verify found wrong with a file; VerifyFindingKindName gives the
// report's name ("missing", "outside", "unreadable", "size", "sha256",
// "dtype", "shape", "numeric", "absent_in_model", "not_compared", "extra").
enum class VerifyFindingKind {
  kMissing,        // the file is not there
  kOutside,        // it resolves to a file outside the baseline directory
  kUnreadable,     // it cannot be read, or is no .npy
  kSize,           // its size differs from the manifest's
  kSha256,         // its checksum differs from the manifest's
  kDtype,          // the .npy header's dtype differs from the manifest's
  kShape,          // the .npy header's shape differs from the manifest's
  kNumeric,        // the re-run's tensor is outside tolerance of the file's
  kAbsentInModel,  // the model has no tensor of that name
  kNotCompared,    // the model did not produce the tensor
  kExtra,          // an .npy file the manifest does not list (not fatal)
};
std::string_view VerifyFindingKindName(VerifyFindingKind kind);

struct VerifyFinding {
  std::string file;  // relative to DIR
  VerifyFindingKind kind = VerifyFindingKind::kMissing;
  std::string message;
  bool fatal = true;
};

struct EnvironmentChange {
  std::string field;  // "ort_version", "parity_version", "cpu", "os", "model_sha256", "config"...
  std::string recorded, now;
};

struct VerifyResult {
  size_t files_checked = 0;
  std::vector<VerifyFinding> findings;
  bool model_checked = false;
  std::vector<EnvironmentChange> changes;
  std::vector<TensorComparison> comparisons;  // with a model: per file, in manifest order
  bool passed() const;
};

// Re-checks every file of the manifest in `dir` (exists, size, sha256, npy
// header's dtype and shape) and, given a model, re-runs the recorded config on
// the recorded inputs and compares each tensor with the comparison engine's
// default tolerance policy, naming what changed in the environment.
// Errors (exit 2): manifest.json missing, unreadable, not JSON or not of
// schema parity.baseline/1; the model's errors. File problems are findings.
Result<VerifyResult> VerifyBaseline(const std::filesystem::path& dir, const std::filesystem::path& model_path,
                                    int64_t max_memory_bytes = 0);

}  // namespace parity
