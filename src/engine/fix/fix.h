// `parity fix`: the smallest change to how a model is deployed that makes a
// failing check pass, found from the check's own localization and verified
// by running the same check again (docs/fix.md).
//
// What is changed depends on what the check compares:
// - a derived int8 (QDQ) or float16 model against its float model
//   (reference kModel): the nodes to keep in float, as quantize_static's
//   `nodes_to_exclude` or the float16 converter's `node_block_list`; the
//   derived model is re-made by a Python child (python/parity/_fix_driver.py);
// - the deployed config against a reference config: the ORT optimizers to
//   switch off (`--disable-optimizer`), else a lower level;
// - an EP against the CPU EP: the EP's precision options (TF32 off on CUDA,
//   OpenVINO's f32 precision hint, TensorRT's fp16 off).
// The search starts at the culprits and the quantization findings, grows the
// set along the graph until the check passes, then bisects and drops what is
// not needed (fix_search.h). Every probe is one `RunCheck` without latency
// runs, localization or layer curve; the answer is checked once more with the
// check's own latency settings to measure its cost.
//
// Thread-compatible. Writes only under `out_dir` and a scratch folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/check/check.h"
#include "engine/fix/fix_search.h"

namespace parity {

struct FixOptions {
  CheckOptions check;  // the failing check, as `parity check` runs it
  std::filesystem::path out_dir;  // claimed (core/output_dir.h); files in it are never overwritten
  int budget_runs = 24;           // verification runs at most (the first check and the last are not counted)
  // The Python that re-makes a derived model: its path, and a folder to put
  // first on its import path (a checkout's python/; empty: none).
  std::string python;
  std::string pythonpath;
  // Calibration samples for quantize_static (.npz files); empty: the
  // check's --inputs. A derived int8 fix with neither is refused.
  std::vector<std::string> calibration;
  // The check's own flags as the user gave them (--inputs, tolerance, ...),
  // repeated in the command that checks the fixed form.
  std::vector<std::string> check_args;
  // Called after each check the search runs (progress); may be empty.
  std::function<void(const SearchProbe&)> on_probe;
};

// Latency (the check's timed runs, mean ms) and file size of one form.
struct FixForm {
  std::string what;  // "fixed", "deployed", "float"
  std::string path;
  std::string config;  // the config it ran under (RunConfig::Label)
  std::optional<double> latency_ms;
  std::optional<int64_t> size_bytes;
};

struct FixResult {
  // "none" (the check passes as it is), "int8", "float16", "optimizers",
  // "level", "ep_options".
  std::string kind;
  bool needed = true;   // false: the check passes already
  bool found = false;   // a change that passes was found and verified
  std::string verdict_before;  // the check's overall word: PASS, FAIL, NOT JUDGED
  std::string verdict_after;   // the fixed form's check ("" when nothing passed)
  std::vector<std::string> change;  // nodes kept in float, optimizers switched off, or provider options
  std::string level;                // "level": the optimization level that passes
  std::vector<std::string> seeds;   // where the search started (culprits, quantization findings)
  std::string command;              // what the user runs to make and check the fixed form
  std::string written;              // the model or config written under out_dir
  std::string remake;               // derived fixes: the command that re-makes the fixed model
  std::string settings;             // the converter's settings as read from the deployed copy (JSON text)
  SearchResult search;              // every probe with its verdict
  int runs = 0;                     // checks run by the search (probes; cache hits not counted)
  double seconds = 0;               // the whole fix, first check to last
  std::vector<FixForm> cost;        // fixed, deployed, float
  std::vector<std::string> top1;    // "logits: 16/16 before, 16/16 after"
  std::string note;                 // why nothing passed, or what was not measured
};

Result<FixResult> Fix(const FixOptions& options);

}  // namespace parity
