// Shared between baseline.cc (writing), baseline_files.cc (a sample's tensor
// files), baseline_verify.cc (checking) and baseline_target.cc (where it may
// go): the manifest's JSON records and the files' records.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/baseline/baseline.h"
#include "engine/run/trace.h"
#include "onnx/graph.h"

namespace parity::baseline_internal {

// ComputeStats of a float32 tensor with no NaN and no Inf, vectorized
// (baseline_stats.cc); false, `s` untouched, when one is there (the caller
// then counts them element by element).
bool Float32FiniteStats(std::span<const float> x, TensorStats& s);
// min, max, mean, std and max_abs of `s` from the finite elements' bounds
// and sums (left 0 when `finite` is 0): ComputeStats's and Float32FiniteStats's end.
void SetFiniteStats(double lo, double hi, double sum, double sum_sq, int64_t finite, TensorStats& s);

nlohmann::json FileToJson(const BaselineFile& f);
// kCorrupt when a required key is missing or of the wrong type, or the path
// is not a plain relative path inside the baseline directory.
Result<BaselineFile> FileFromJson(const nlohmann::json& j);

// Parses a manifest's text (`path` names it in errors) and checks the type of
// every field verify reads (docs/security.md): kCorrupt for malformed JSON or
// a wrong type, no samples or a sample without files; kInvalidArgument when
// the schema is not parity.baseline/1. Never throws.
struct ManifestSample {
  std::string name;
  std::vector<BaselineFile> files;
};
struct ParsedManifest {
  nlohmann::json json;
  std::vector<ManifestSample> samples;
};
Result<ParsedManifest> ParseManifest(std::string_view text, const std::string& path);

// One sample of the manifest: its files and findings.
nlohmann::json SampleToJson(const BaselineSample& s);
// The manifest's "control_flow": {"samples", "ifs": [{"node", "then_samples",
// "else_samples"}], "notes"} (docs/baseline.md).
nlohmann::json ControlFlowJson(const ControlFlowReport& r);

// Whether the baseline may go to `dir`, checked before anything is written
// (baseline_target.cc): new or empty, or with `overwrite` an earlier
// parity.baseline/1 folder holding only what its manifest lists and none of
// this command's inputs. kInvalidArgument naming what is in the way.
Status CheckTargetDir(const std::filesystem::path& dir, bool overwrite);

// An observed layer: its tensor, file, producer and index.
struct Layer {
  std::string tensor, file, producer, op_type;
  int64_t index = 0;
};

// Each tensor's file record before it is written: file name, role, producer
// (the same names in every sample's directory). Inputs apart: a graph input
// that is also an output has a file for each role.
struct FileTemplates {
  std::unordered_map<std::string, BaselineFile> inputs;
  std::unordered_map<std::string, BaselineFile> others;  // layers and outputs
};

// The file names: "input[_<name>]", "layer_<index>_<tensor>", "output[_<name>]".
FileTemplates NameFiles(const GraphView& graph, const std::vector<Layer>& layers);

// One sample's files, written in file order (inputs, layers, outputs); each
// file's sha256 is what the sample's second run is checked against.
Result<BaselineSample> WriteSampleFiles(Tracer& tracer, const Sample& sample, const std::filesystem::path& sample_dir,
                                        const std::string& sample_subdir, const std::vector<std::string>& inputs,
                                        FileTemplates& templates, const std::filesystem::path& inputs_path);

// The second run: hashes every tensor again as its file would be and marks
// the files whose bytes differ from the first run's (inputs are given, never
// non-deterministic). The first run hashed each tensor once, as its file.
Status CheckDeterminism(Tracer& tracer, const Sample& sample, BaselineSample& out);

// The first NaN, the first Inf and the out-of-scale tensors, in file order.
void RecordFindings(BaselineSample& out);

}  // namespace parity::baseline_internal
