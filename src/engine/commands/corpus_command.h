// check --corpus / --prompts --torch-model's one engine entry (issue 55: the
// CLI only parses and wires): records the corpus when given prompts and a
// factory (engine/generate/corpus_recorder.h), runs it on the local engine
// (one session, every prompt in turn), on Ray (engine/ray/corpus_ray.h) or,
// for an ORT GenAI package (a folder), through the GenAI runtime's own loop
// (engine/generate/genai_check.h), and builds the CorpusResult.
#pragma once

#include <string>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/generate/corpus_result.h"
#include "engine/load/pick_sample.h"
#include "engine/ray/ray_driver.h"

namespace parity {

struct CorpusRequest {
  std::string model;          // the step model (.onnx) or an ORT GenAI package (a folder)
  RunConfig target;
  std::string corpus;         // --corpus DIR, a recorded corpus; or:
  std::string prompts;        // --prompts FILE with
  std::string torch_model;    // --torch-model MODULE:FACTORY, recorded first
  std::string output_names;   // the recorder's --output-names
  int generate = 32;          // steps a prompt when recording
  int top_k = 64;             // logits kept a step when recording
  double kl_tolerance = -1;   // < 0: calibrated from the record (ResolveCorpusTolerance)
  std::string engine = "local";  // local | ray
  RayEngineOptions ray;          // --ray-*; its python runs the recorder and the GenAI driver too
};

// Errors: kInvalidArgument for a request that does not hold together
// (--corpus with --prompts, --prompts without --torch-model, an unknown
// engine, a GenAI package on Ray or not a package), the recorder's, the
// record's, the run's. `note` hears "recording PyTorch's decode of ...";
// prompts done go to the progress sink (core/progress.h).
Result<CorpusResult> CheckCorpus(const CorpusRequest& request, const NoteSink& note);

}  // namespace parity
