// check's references built, once, before any stage (check_reference.h): the
// kinds check takes validated, the --reference-model loaded, the PyTorch dumps
// read and checked against the model, and what follows from which of them
// the check has (the samples' model, the judging policy, the report's config).
#include <fmt/format.h>

#include "engine/check/check_internal.h"
#include "engine/quant/output_tolerance.h"
#include "engine/torch/dump_check.h"
#include "engine/torch/torch_dump.h"

namespace parity::check_internal {
namespace {

// Reads a dump and checks that it fits the model: a dump made for another
// model is the user's mistake, found before any run (input_check.h); the
// reference model's export counts as this one's. What a reader should know
// about it (a changed model, the exporter's TracerWarnings, sizes PyTorch
// refused) goes into `notes`, the report's.
// Whether the dump was made from this very file is said once the file's
// hash is there (ProvenanceNotes): the hash runs while the check does.
Result<TorchDump> LoadDump(Context& ctx, const std::string& dir, std::vector<std::string>& notes) {
  PARITY_ASSIGN_OR_RETURN(TorchDump dump,
                          LoadFittingDump(dir, ctx.subject.info, ctx.options.model_path, ctx.options.allow_symlinks));
  if (dump.export_record)
    for (const auto& w : dump.export_record->tracer_warnings)
      notes.push_back(
          fmt::format("{}: the exporter warned that the trace may be wrong for other shapes: {}", dir, w));
  for (const auto& r : dump.sizes_refused)
    notes.push_back(fmt::format("{}: PyTorch itself refused the size {}; it is not judged", dir, r));
  if (std::string dropped = DroppedInputsNote(dump, ctx.options.model_path); !dropped.empty())
    notes.push_back(std::move(dropped));
  return dump;
}

// --torch and its further dumps, each checked against the model.
Status LoadDumps(Context& ctx, std::vector<std::string>& notes) {
  const CheckOptions& o = ctx.options;
  std::vector<const Reference*> given;
  if (o.torch) given.push_back(&*o.torch);
  if (!o.more_torch.empty() && given.empty()) return InvalidArgument("more PyTorch dumps given without a first one");
  for (const auto& more : o.more_torch) given.push_back(&more);
  for (const Reference* torch : given) {
    PARITY_ASSIGN_OR_RETURN(TorchDump dump, LoadDump(ctx, torch->path.string(), notes));
    ctx.torch.dumps.push_back(std::move(dump));
  }
  // The size PyTorch ran is the deployed one: latency is measured there.
  // Unreadable, it is said by the numerics stage.
  for (const TorchDump& dump : ctx.torch.Traced())
    if (auto inputs = LoadTorchFiles(dump, dump.Samples().front().inputs))
      ctx.torch.traced_sample = Sample{"torch", std::move(*inputs)};
  return {};
}

}  // namespace

std::span<const TorchDump> TorchSide::Traced() const {
  return std::span<const TorchDump>(dumps).first(dumps.empty() ? 0 : 1);
}

std::map<std::string, int64_t> TorchSide::TracedDims(const ModelInfo& info) const {
  std::map<std::string, int64_t> dims;
  for (const TorchDump& dump : Traced()) {
    auto inputs = LoadTorchInputs(dump);
    if (!inputs) return dims;
    for (const auto& v : info.inputs) {
      const Tensor* t = inputs->Find(v.name);
      if (t == nullptr || !v.type.has_shape || t->shape().size() != v.type.dims.size()) continue;
      for (size_t i = 0; i < v.type.dims.size(); ++i)
        if (v.type.dims[i].kind == Dim::Kind::kSymbolic) dims.emplace(v.type.dims[i].symbol, t->shape()[i]);
    }
  }
  return dims;
}

int TorchSide::CurveSessions() const { return dumps.empty() ? 3 : 2; }

BranchJudge BranchJudgeOf(const TorchSide& torch) {
  if (torch.dumps.empty())
    return {.name = "the reference",
            .counts_check_samples = true,
            .others_judged = "for robustness only or not at all",
            .hint_branch = "; give --inputs a sample that takes it",
            .hint_loop = "; give --inputs a sample that runs it"};
  const std::string dump = "python -m parity.torch dump ... --cover-branches N (torch.cond), or --sizes";
  return {.name = "PyTorch",
          .counts_check_samples = false,
          .others_judged = "between ONNX Runtime configs only: an export's fault cannot show there",
          .hint_branch = "; dump samples that take it: " + dump,
          .hint_loop = "; dump samples that run it: " + dump};
}

// check judges against a config or a model in ORT, and against PyTorch
// through `torch`; a baseline directory is `baseline verify`'s.
Status CheckReferenceKinds(const CheckOptions& o) {
  PARITY_RETURN_IF_ERROR(RequireOrtReference(o.reference, "check"));
  // Two runtimes compare one model at its configs; PyTorch and a reference
  // model are separate checks.
  if (!o.reference.config.ort_library.empty() && (o.torch || o.reference.model_file() != nullptr))
    return InvalidArgument(fmt::format("--reference-ort-library compares one model on two ONNX Runtime releases; "
                                       "check against {} separately",
                                       o.torch ? "PyTorch (--torch)" : "--reference-model"));
  if (o.torch) PARITY_RETURN_IF_ERROR(RequireTorchDump(*o.torch, "check", "the PyTorch reference"));
  for (const auto& more : o.more_torch) PARITY_RETURN_IF_ERROR(RequireTorchDump(more, "check", "a further PyTorch reference"));
  return {};
}

Result<std::vector<std::string>> LoadReferences(Context& ctx,
                                                std::optional<Sha256FileInBackground>& reference_sha) {
  const CheckOptions& o = ctx.options;
  if (const auto* file = o.reference.model_file()) {
    if (o.torch) reference_sha.emplace(*file);  // for the dumps' provenance
    PARITY_ASSIGN_OR_RETURN(Model reference, Model::Load(file->string()));
    ctx.subject.reference = ReferenceModel(std::move(reference), file->string());
  }
  std::vector<std::string> notes;
  PARITY_RETURN_IF_ERROR(LoadDumps(ctx, notes));
  return notes;
}

CheckConfig ConfigOf(const CheckOptions& o) {
  CheckConfig c{.reference = o.reference.config,
                .target = o.target,
                .tolerance = o.policy,
                .samples = o.inputs_path.empty() ? "generated" : o.inputs_path,
                .seed = o.seed,
                .torch = o.torch ? o.torch->path.string() : "",
                .more_torch = {}};
  for (const auto& more : o.more_torch) c.more_torch.push_back(more.path.string());
  return c;
}

const Model& SampleModel(const Subject& subject) {
  if (!subject.reference.ModelsDiffer()) return subject.model;
  const Model& model = subject.ReferenceModel();
  const ModelInfo reference = Inspect(model);
  for (const auto& in : subject.info.inputs)
    for (const auto& r : reference.inputs)
      if (r.name == in.name && r.type.dtype && in.type.dtype && *r.type.dtype != *in.type.dtype &&
          IsFloating(*r.type.dtype) && IsFloating(*in.type.dtype))
        return model;
  return subject.model;
}

Judging JudgingOf(const Subject& subject, const TolerancePolicy& policy) {
  Judging judging{.policy = policy};
  if (!subject.reference.ModelsDiffer()) return judging;
  judging.output_rules = DeriveOutputRules(subject.ReferenceModel(), subject.model, policy);
  judging.policy = WithOutputRules(policy, judging.output_rules);
  judging.slice_bands = true;
  judging.conditioning = false;
  return judging;
}

std::string OrtAgainst(const CheckOptions& o) { return "onnx:" + o.reference.config.Label(); }

}  // namespace parity::check_internal
