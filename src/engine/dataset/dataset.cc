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
  auto reference = evaluator.reference().ForEntry(entry);
  if (!reference) {
    out.bad.push_back({.id = DatasetSampleId(entry, "", 1), .error = reference.error().message()});
    return out;
  }
  for (const Sample& sample : *samples) {
    const std::string id = DatasetSampleId(entry, sample.name, samples->size());
    auto values = (*reference)(sample, samples->size());
    if (!values) {
      out.bad.push_back({.id = id, .error = values.error().message()});
      continue;
    }
    auto cells = evaluator.Evaluate(sample, *values);
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

Status StreamLocally(const DatasetOptions& o, const Model& model, const ReferenceModel& reference_model,
                     const DatasetReference& reference, const ModelInfo& info, const std::vector<fs::path>& entries,
                     DatasetReport& report) {
  PARITY_ASSIGN_OR_RETURN(
      DatasetEvaluator evaluator,
      DatasetEvaluator::Create(model, reference_model, reference,
                               {.target = o.target, .policy = o.policy, .label = o.model_path,
                                .model_path = o.model_path, .allow_symlinks = o.allow_symlinks}));
  for (size_t i = 0; i < entries.size(); ++i) {
    DatasetEntryResult r = EvaluateDatasetEntry(evaluator, info, entries[i], i, o.model_path);
    PARITY_RETURN_IF_ERROR(TakeBad(o, r.bad, report));
    for (DatasetRow& row : r.rows) report.rows.push_back(std::move(row));
    if (o.progress) o.progress(static_cast<int64_t>(report.rows.size()), i + 1, entries.size());
  }
  return {};
}

}  // namespace

Result<DatasetReport> RunDataset(const DatasetOptions& o) {
  PARITY_RETURN_IF_ERROR(RequireOrtReference(o.reference, "check --dataset"));
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(o.model_path));
  PARITY_ASSIGN_OR_RETURN(const DatasetReference reference,
                          DatasetReference::Of(o.reference, o.reference_outputs, "check --dataset"));
  PARITY_ASSIGN_OR_RETURN(const ReferenceModel reference_model, reference.LoadModel());
  const ModelInfo info = Inspect(model);
  if (info.outputs.empty())
    return InvalidArgument(fmt::format("{}: the model has no outputs; there is nothing to check", o.model_path));
  PARITY_ASSIGN_OR_RETURN(std::vector<fs::path> entries, ListDatasetEntries(o.source, o.allow_symlinks));

  DatasetReport report{.engine = o.engine, .model = o.model_path, .reference = reference.Label(),
                       .target = o.target, .tolerance = o.policy, .source = o.source,
                       .locate_worst = o.locate_worst, .locate_flip_cap = o.locate_flip_cap};
  report.env = CurrentEnvironment();
  report.tool_version = report.env.parity_version;
  for (const auto& v : Inspect(reference_model.Of(model)).outputs) report.outputs.push_back(v.name);
  const auto start = std::chrono::steady_clock::now();
  if (o.rows) {
    PARITY_RETURN_IF_ERROR(o.rows(entries, reference, report));
    if (!o.skip_bad && !report.bad.empty())
      return InvalidArgument(fmt::format("sample '{}': {} (--on-bad-sample skip to go on without it)",
                                         report.bad.front().id, report.bad.front().error));
  } else {
    PARITY_RETURN_IF_ERROR(StreamLocally(o, model, reference_model, reference, info, entries, report));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report.rows.empty())
    return InvalidArgument(fmt::format("{}: every sample is bad ({} skipped); nothing was judged", o.source,
                                       report.skipped));
  report.count = static_cast<int64_t>(report.rows.size());
  SummarizeDataset(report);
  if (std::string why = reference.NotLocated(); !why.empty()) {
    report.notes.push_back(std::move(why));
    return report;
  }
  LocateDatasetSamples(o, model, reference_model, reference, info, entries, report);
  return report;
}

}  // namespace parity
