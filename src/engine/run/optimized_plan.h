// A target session together with the plan ORT made for it: the optimized
// model ORT saved while creating the session, its graph view, and the fusion
// map against the original graph (its files in a ScratchDir, core/scratch_dir.h).
// The session is the one a Runner keeps (engine/runner/runner.h: a plan job
// with keep_session), so no session is made outside the Runner.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/scratch_dir.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/run/fusion_map.h"
#include "engine/runner/runner.h"
#include "engine/runner/session_run.h"
#include "onnx/graph.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

// PlanWeights, AskForOptimizedModel: engine/runner/session_run.h.

struct PlannedSession {
  // The in-process Runner keeping the session of the plan's job; null once
  // KeepUntouched released it (one session alive at a time).
  std::unique_ptr<Runner> runner;
  const ort::Session* session() const { return runner ? runner->kept_session() : nullptr; }
  // What ORT saved, structure only: ORT writes the initializers to
  // `<optimized_path>.data`, a link to /dev/null (they are never on disk);
  // LoadOptimizedWithWeights saves them again when a fallback needs them.
  Model optimized;
  std::filesystem::path optimized_path;
  GraphView optimized_view;   // infer_shapes=false
  FusionMap map;              // against the `original` view passed in
  std::vector<std::string> modified_optimizers;  // when the log was captured
  std::vector<ort::EpAssignment> ep_assignment;  // which EP took which node (the session's)
  // What the session was created from, to save the weights on demand
  // (empty for a compiling EP's session, which saves no optimized model).
  std::optional<ort::ModelSource> source;
  RunConfig config;
  // Set by KeepUntouched: what the untouched session gave for the sample
  // being observed, how long that run took, the session's output names.
  std::optional<TensorSet> untouched;
  double untouched_run_ms = 0;
  std::vector<std::string> output_names;
};

// Runs `sample` on plan.session(), keeps its outputs in `plan` and releases the
// session, so that the sessions observing it (each holding its own copy of
// the weights) are created with no other alive (issue 26). ObserveTarget then
// reads the kept outputs; the plan's map and optimized view stay. A plan
// whose session is gone but whose outputs were kept by its maker is left as
// it is (its outputs must be of `sample`).
Status KeepUntouched(PlannedSession& plan, const Sample& sample, const std::string& label);

// Creates a session of `model` (node names already written, see
// WithNodeNames) under `config`, asking ORT to save its optimized model to
// `optimized_path` (initializers in a side file), loads its structure and
// maps it onto `original`. `extras`: by default no CPU arena (a plan's
// session runs once or twice); a session that is also the deployed target
// (check's) keeps ORT's default arena.
// Errors: those of CreateSession, and of loading the saved model (kRuntime:
// ORT wrote something parity cannot read).
Result<PlannedSession> CreatePlannedSession(const Model& model, const GraphView& original, RunConfig config,
                                            const std::string& label,
                                            const std::filesystem::path& optimized_path,
                                            const ort::SessionExtras& extras = {.cpu_mem_arena = false});
// The same from the model's serialized bytes (shared between sessions of the
// same model, so that an 87 MB model is serialized once, not per session).
Result<PlannedSession> CreatePlannedSession(const ort::ModelSource& model, const GraphView& original,
                                            RunConfig config, const std::string& label,
                                            const std::filesystem::path& optimized_path,
                                            const ort::SessionExtras& extras = {.cpu_mem_arena = false});

// The optimized model ORT saved for `plan`, initializers included, for
// running it: ORT is asked once more for the same optimized model (same
// model, same config), this time with its weights in a side file
// `<optimized_path stem>_weights.onnx.data` of the same folder.
Result<Model> LoadOptimizedWithWeights(const PlannedSession& plan, const std::string& label);

// The optimized model of `model` under `config` and its map, without keeping
// the session.
Result<FusionMap> PlanOf(const Model& model, const GraphView& original, const RunConfig& config,
                         const std::string& label, const std::filesystem::path& optimized_path);

}  // namespace parity
