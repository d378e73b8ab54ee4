// Whether a PyTorch dump belongs to the model, checked before any run and
// after alignment. A mismatch is the user's mistake (invalid argument, one
// line, exit 2), never a failed check. Inputs are checked by the one rule of
// engine/inputs/input_check.h.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "engine/torch/torch_dump.h"
#include "onnx/inspect.h"

namespace parity {

// Whether `dump` was made for the model: its input names must be the
// model's inputs and its output names among the model's outputs, its input
// tensors must pass CheckInputs and its output tensors must have the dtype
// and the known dims the model declares. Reads the dump's input and output
// files. Invalid argument on a mismatch, naming the dump and what differs.
// When the export record carries the exported file's sha256 and it is none
// of `model_sha256s` (the model, or the model it was derived from), `*note`
// says so: a hand-patched or simplified model differs from its export by
// design, so that alone is not an error (a dump from another model is caught
// by the names, the shapes, or later by alignment: CheckSomeLayerAligned).
Status CheckDumpFitsModel(const TorchDump& dump, const ModelInfo& model, const std::string& model_label,
                          const std::vector<std::string>& model_sha256s, std::string* note);

// CheckDumpFitsModel's note alone: empty when the export record names no
// sha256 or one of `model_sha256s`. For a caller that hashes the model while
// it does something else (check: the note is added once the hash is there).
std::string DumpProvenanceNote(const TorchDump& dump, const std::string& model_label,
                               const std::vector<std::string>& model_sha256s);

// CheckDumpFitsModel with the sha256 of each file in `model_paths` (the
// model first, then the model it was derived from, if any; empty paths are
// skipped).
Status CheckDumpFitsModelFiles(const TorchDump& dump, const ModelInfo& model,
                               const std::vector<std::string>& model_paths, std::string* note);

// The one "load the dump, check it fits" of locate, align and check:
// LoadTorchDump(dir) then CheckDumpFitsModel against `model`, named
// `model_label`. With `note`, the provenance is checked too, hashing each of
// `model_paths` now (CheckDumpFitsModelFiles); without, the caller says it
// later (check hashes the model while it runs: DumpProvenanceNote).
// Errors: LoadTorchDump's, CheckDumpFitsModel's.
Result<TorchDump> LoadFittingDump(const std::filesystem::path& dir, const ModelInfo& model,
                                  const std::string& model_label, bool allow_symlinks,
                                  const std::vector<std::string>& model_paths = {}, std::string* note = nullptr);

// The dump's inputs the model lacks, left out of it (TorchDump::
// dropped_inputs): when every input of the model is among the dump's by
// name, the others are inputs an exporter dropped (TorchScript drops an
// unused input, or one it traced as a constant). LoadFittingDump calls it
// before CheckDumpFitsModel; a dump whose names do not cover the model's is
// left as it is (matched by position, or refused).
void DropInputsTheModelLacks(TorchDump& dump, const ModelInfo& model);

// "the dump's input(s) 'mask' are not inputs of m.onnx: ..."; "" when none
// was dropped.
std::string DroppedInputsNote(const TorchDump& dump, const std::string& model_label);

// After alignment: a dump none of whose layers aligns with the model was made
// from another model (invalid argument); `aligned` counts the aligned layers.
Status CheckSomeLayerAligned(const TorchDump& dump, size_t aligned, const std::string& model_label);

// Where the dump's traced sample had size 1 on an axis its other sizes vary
// ("decoder_input_ids[1]"): exporters fix such dims (torch.export
// specializes sizes 0 and 1; TorchScript folds a size-1 shape into
// constants), so an export traced there departs at every other size.
std::string SizeOneHint(const TorchDump& dump);

}  // namespace parity
