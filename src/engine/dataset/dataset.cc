// RunDataset: the streaming pass (local engine, or rows from the Ray engine),
// then the distribution, then locate on the chosen samples.
#include "engine/dataset/dataset.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "engine/dataset/dataset_source.h"
#include "engine/dataset/dataset_stats.h"
#include "engine/run/environment.h"

namespace parity {
namespace fs = std::filesystem;

DatasetEntryResult EvaluateDatasetEntry(const DatasetEvaluator& evaluator, const ModelInfo& info,
                                        const fs::path& entry, size_t index, const std::string& label) {
  DatasetEntryResult out;
  auto samples = LoadDatasetEntry(info, entry, label, evaluator.allow_symlinks());
  if (!samples) {
    out.bad.push_back({.id = DatasetSampleId(entry, "", 1), .error = samples.error().message()});
    return out;
  }
  std::vector<Sample> stored;
  if (!evaluator.reference_outputs().empty()) {
    auto loaded = LoadDatasetReference(evaluator.reference_outputs(), entry, evaluator.allow_symlinks());
    if (!loaded) {
      out.bad.push_back({.id = DatasetSampleId(entry, "", 1), .error = loaded.error().message()});
      return out;
    }
    stored = std::move(*loaded);
  }
  for (const Sample& sample : *samples) {
    const std::string id = DatasetSampleId(entry, sample.name, samples->size());
    const TensorSet* reference = stored.empty() ? nullptr : FindDatasetReference(stored, sample, samples->size());
    if (!evaluator.reference_outputs().empty() && reference == nullptr) {
      out.bad.push_back({.id = id, .error = "no stored reference outputs for this sample (--reference-outputs)"});
      continue;
    }
    auto cells = evaluator.Evaluate(sample, reference);
    if (!cells) {
      out.bad.push_back({.id = id, .error = cells.error().message()});
      continue;
    }
    out.rows.push_back({.id = id, .entry = index, .sample = sample.name, .cells = std::move(*cells)});
  }
  return out;
}

namespace {

// Records the bad samples of one entry; with !skip_bad the first is the error.
Status TakeBad(const DatasetOptions& o, std::vector<DatasetBadSample>& bad, DatasetReport& report) {
  for (DatasetBadSample& b : bad) {
    if (!o.skip_bad)
      return InvalidArgument(fmt::format("sample '{}': {} (--on-bad-sample skip to go on without it)", b.id, b.error));
    ++report.skipped;
    if (report.bad.size() < kMaxListedBadSamples) report.bad.push_back(std::move(b));
  }
  return {};
}

Status StreamLocally(const DatasetOptions& o, const Model& model, const Model* reference_model,
                     const ModelInfo& info, const std::vector<fs::path>& entries, DatasetReport& report) {
  PARITY_ASSIGN_OR_RETURN(
      DatasetEvaluator evaluator,
      DatasetEvaluator::Create(model, reference_model,
                               {.reference = o.reference, .target = o.target, .policy = o.policy, .label = o.model_path,
                                .model_path = o.model_path, .reference_outputs = o.reference_outputs, .allow_symlinks = o.allow_symlinks}));
  for (size_t i = 0; i < entries.size(); ++i) {
    DatasetEntryResult r = EvaluateDatasetEntry(evaluator, info, entries[i], i, o.model_path);
    PARITY_RETURN_IF_ERROR(TakeBad(o, r.bad, report));
    for (DatasetRow& row : r.rows) report.rows.push_back(std::move(row));
    if (o.progress) o.progress(static_cast<int64_t>(report.rows.size()), i + 1, entries.size());
  }
  return {};
}

std::string ReferenceLabel(const Reference& r, const fs::path& outputs) {
  if (!outputs.empty()) return "outputs:" + outputs.string();
  // Another ORT release runs the reference (in a child process): named by its file.
  if (!r.config.ort_library.empty()) return fmt::format("{} on {}", parity::ReferenceLabel(r), r.config.ort_library);
  return parity::ReferenceLabel(r);
}

}  // namespace

Result<DatasetReport> RunDataset(const DatasetOptions& o) {
  PARITY_RETURN_IF_ERROR(RequireOrtReference(o.reference, "check --dataset"));
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(o.model_path));
  PARITY_RETURN_IF_ERROR(RequireOneReference(o.reference, o.reference_outputs, "check --dataset"));
  PARITY_ASSIGN_OR_RETURN(const ReferenceModel reference, ReferenceModel::Load(o.reference));
  const ModelInfo info = Inspect(model);
  if (info.outputs.empty())
    return InvalidArgument(fmt::format("{}: the model has no outputs; there is nothing to check", o.model_path));
  PARITY_ASSIGN_OR_RETURN(std::vector<fs::path> entries, ListDatasetEntries(o.source, o.allow_symlinks));

  DatasetReport report{.engine = o.engine, .model = o.model_path, .reference = ReferenceLabel(o.reference, o.reference_outputs),
                       .target = o.target, .tolerance = o.policy, .source = o.source,
                       .locate_worst = o.locate_worst, .locate_flip_cap = o.locate_flip_cap};
  report.env = CurrentEnvironment();
  report.tool_version = report.env.parity_version;
  for (const auto& v : Inspect(reference.Of(model)).outputs) report.outputs.push_back(v.name);
  const auto start = std::chrono::steady_clock::now();
  if (o.rows) {
    PARITY_RETURN_IF_ERROR(o.rows(entries, report));
    if (!o.skip_bad && !report.bad.empty())
      return InvalidArgument(fmt::format("sample '{}': {} (--on-bad-sample skip to go on without it)",
                                         report.bad.front().id, report.bad.front().error));
  } else {
    PARITY_RETURN_IF_ERROR(StreamLocally(o, model, reference.Loaded(), info, entries, report));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report.rows.empty())
    return InvalidArgument(fmt::format("{}: every sample is bad ({} skipped); nothing was judged", o.source,
                                       report.skipped));
  report.count = static_cast<int64_t>(report.rows.size());
  SummarizeDataset(report);
  if (!o.reference_outputs.empty()) {
    // locate compares ORT runs (configs or models) tensor by tensor; stored
    // outputs have no intermediate tensors to compare against.
    report.notes.push_back("not located: the reference is stored outputs (--reference-outputs), which locate cannot run");
    return report;
  }
  LocateDatasetSamples(o, model, reference, info, entries, report);
  return report;
}

}  // namespace parity
