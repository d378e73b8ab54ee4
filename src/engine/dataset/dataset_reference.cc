// check --dataset's reference, decided once (dataset_reference.h): stored
// outputs, or an ORT reference (a config of MODEL or a --reference-model; in
// this process or, its config's ort_library, on another release in a child).
#include "engine/dataset/dataset_reference.h"

#include <fmt/format.h>

#include "engine/dataset/dataset_source.h"
#include "engine/locate/locate.h"
#include "engine/locate/runtime_diff.h"
#include "engine/runner/runner.h"
#include "onnx/inspect.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> OutputNames(const Model& model) {
  std::vector<std::string> names;
  for (const auto& out : Inspect(model).outputs) names.push_back(out.name);
  return names;
}

// An ORT reference: its runner keeps one session of its model, created by
// Open, and runs each sample when the entry loop asks.
class OrtValues final : public DatasetReferenceValues {
 public:
  OrtValues(std::unique_ptr<Runner> runner, RunnerJob job, std::vector<std::string> outputs)
      : runner_(std::move(runner)), job_(std::move(job)) {
    outputs_ = std::move(outputs);
  }
  Result<DatasetEntryReference> ForEntry(const fs::path&) const override {
    return DatasetEntryReference([this](const Sample& sample, size_t) -> Result<TensorSet> {
      return WithContext(runner_->Run(job_, sample.tensors), fmt::format("sample '{}' on the reference", sample.name));
    });
  }

 private:
  std::unique_ptr<Runner> runner_;
  RunnerJob job_;  // its model, one kept session
};

// Stored outputs: each entry's are read from DIR/STEM.npz (LoadDatasetReference).
class StoredValues final : public DatasetReferenceValues {
 public:
  StoredValues(fs::path dir, bool allow_symlinks, std::vector<std::string> outputs)
      : dir_(std::move(dir)), allow_symlinks_(allow_symlinks) {
    outputs_ = std::move(outputs);
  }
  Result<DatasetEntryReference> ForEntry(const fs::path& entry) const override {
    PARITY_ASSIGN_OR_RETURN(std::vector<Sample> loaded, LoadDatasetReference(dir_, entry, allow_symlinks_));
    auto stored = std::make_shared<const std::vector<Sample>>(std::move(loaded));
    return DatasetEntryReference([stored](const Sample& sample, size_t samples_in_entry) -> Result<TensorSet> {
      const TensorSet* found = FindDatasetReference(*stored, sample, samples_in_entry);
      if (found == nullptr)
        return InvalidArgument("no stored reference outputs for this sample (--reference-outputs)");
      return *found;
    });
  }

 private:
  fs::path dir_;
  bool allow_symlinks_;
};

}  // namespace

Result<DatasetReference> DatasetReference::Of(const Reference& r, fs::path stored, std::string_view command) {
  PARITY_RETURN_IF_ERROR(RequireOneReference(r, stored, command));
  return DatasetReference(r, std::move(stored));
}

DatasetReference DatasetReference::FromWorker(RunConfig config, const std::string& reference_model,
                                              const std::string& stored) {
  Reference r{.config = std::move(config)};
  if (!reference_model.empty()) {
    r.kind = Reference::Kind::kModel;
    r.path = reference_model;
  }
  return DatasetReference(std::move(r), stored);
}

std::string DatasetReference::Label() const {
  if (!stored_.empty()) return "outputs:" + stored_.string();
  // Another ORT release runs the reference (in a child process): named by its file.
  if (!reference_.config.ort_library.empty())
    return fmt::format("{} on {}", ReferenceLabel(reference_), reference_.config.ort_library);
  return ReferenceLabel(reference_);
}

std::vector<std::string> DatasetReference::WorkerArgs(const fs::path& config_json) const {
  std::vector<std::string> args = {"--reference-config", config_json.string()};
  if (const fs::path* file = reference_.model_file())
    args.insert(args.end(), {"--reference-model", fs::absolute(*file).string()});
  if (!stored_.empty()) args.insert(args.end(), {"--reference-outputs", fs::absolute(stored_).string()});
  return args;
}

Result<std::unique_ptr<DatasetReferenceValues>> DatasetReference::Open(const Model& target, const ReferenceModel& model,
                                                                       const fs::path& model_path,
                                                                       bool allow_symlinks) const {
  PARITY_RETURN_IF_ERROR(RequireOrtReference(reference_, "check --dataset"));
  if (!stored_.empty()) return std::make_unique<StoredValues>(stored_, allow_symlinks, OutputNames(target));
  if (model_path.empty()) return InternalError("DatasetEvaluator: no model file");
  // The reference's session first: it is kept for every sample (one job, one model).
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner,
                          WithContext(MakeOrtRunner(reference_.config), "the reference"));
  RunnerJob job{.model = ReferenceFile(reference_, model_path), .keep_session = true};
  PARITY_RETURN_IF_ERROR(runner->Prepare(job));
  return std::make_unique<OrtValues>(std::move(runner), std::move(job), OutputNames(model.Of(target)));
}

std::string DatasetReference::NotLocated() const {
  // locate compares ORT runs (configs or models) tensor by tensor; stored
  // outputs have no intermediate tensors to compare against.
  if (!stored_.empty())
    return "not located: the reference is stored outputs (--reference-outputs), which locate cannot run";
  return "";
}

void DatasetReference::Locate(const Model& target, const ReferenceModel& model, const Sample& sample,
                              const RunConfig& target_config, const TolerancePolicy& policy,
                              const std::string& model_label, DatasetLocated& out) const {
  if (!reference_.config.ort_library.empty() && !model.ModelsDiffer()) {
    // Two ORT releases: the reference runs on its own library in a child
    // process, the fused plans of both compared (engine/locate/runtime_diff.h).
    RuntimeLocateOptions across{.reference = reference_.config, .target = target_config, .policy = policy,
                                .model_label = model_label};
    auto report = LocateAcrossRuntimes(target, sample, across);
    if (!report) {
      out.error = report.error().message();
      return;
    }
    out.first = report->first_divergence;
    if (out.first && out.first->covers.size() <= 1) {
      out.node = out.first->producer;
      out.node_op = out.first->op_type;
    }
    return;
  }
  // Where one sample first diverges. With a reference model whose first
  // divergence covers several nodes, the two models are compared unfused too,
  // which names the original node that computes differently (as check does).
  LocateOptions options{.reference = reference_.config, .target = target_config, .policy = policy,
                        .model_label = model.Label(model_label), .target_label = model.TargetLabel(model_label),
                        .ablation = false, .precision = false};
  auto report = parity::Locate(model.Of(target), model.DerivedFrom(target), sample, options);
  if (!report) {
    out.error = report.error().message();
    return;
  }
  out.first = report->first_divergence;
  if (!model.ModelsDiffer() || !out.first) return;
  if (out.first->covers.size() <= 1) {
    out.node = out.first->producer;
    out.node_op = out.first->op_type;
    return;
  }
  LocateOptions unfused = options;
  unfused.target = reference_.config;
  unfused.drilldown = false;
  auto fine = parity::Locate(model.Of(target), model.DerivedFrom(target), sample, unfused);
  if (fine && fine->first_divergence) {
    out.node = fine->first_divergence->producer;
    out.node_op = fine->first_divergence->op_type;
  }
}

}  // namespace parity
