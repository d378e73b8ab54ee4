// parity locate's one engine entry (issue 55: the CLI only parses and wires).
// The command hands over what it parsed; this decides which locate runs:
//   --reference torch:DIR             the export against PyTorch, then the
//                                     deployed config (engine/torch/locate_torch.h);
//   --reference-ort-library/--target-ort-library
//                                     two ONNX Runtime releases at one config
//                                     (engine/locate/runtime_diff.h);
//   else                              target against reference in one runtime
//                                     (engine/locate/locate.h).
// and returns what the report writers need.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "engine/load/pick_sample.h"
#include "engine/load/reference.h"
#include "engine/locate/locate.h"
#include "engine/torch/locate_torch.h"

namespace parity {

struct LocateRequest {
  std::string model;         // the .onnx path, also its label
  std::string target_model;  // --target-model (empty: none)
  Reference reference;       // --reference, parsed
  bool reference_given = false;  // else two runtimes compare the target's config
  std::string reference_ort_library, target_ort_library;
  bool allow_symlinks = false;   // inside the PyTorch dump (docs/security.md)
  SamplePick sample;             // the ORT locates' sample (the torch one runs the dump's)
  LocateOptions options;         // target, reference config, policy, labels, repro_dir, ...
};

struct LocateOutcome {
  std::optional<TorchLocateResult> torch;  // --reference torch:DIR
  std::optional<LocateReport> report;      // an ORT reference (one runtime or two)
  bool across_runtimes = false;            // `report` compares two ORT releases
  // --repro asked but not written, and why ("nothing diverges"); "" otherwise.
  std::string repro_not_written;
  bool passed() const { return torch ? torch->passed() : !report->diverged(); }
};

// Loads the model(s), picks the sample or the dump and runs the locate the
// request names. `note` hears the user's notes (the sample chosen, the dump's
// provenance) as they arise. Errors: bad input (kInvalidArgument: a torch
// reference with an ORT library, --target-model with two runtimes, a dump of
// another model), a model or sample ORT refuses, a runtime failure.
Result<LocateOutcome> LocateAny(const LocateRequest& request, const NoteSink& note);

}  // namespace parity
