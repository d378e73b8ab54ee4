#include "engine/dataset/dataset_eval.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "compare/judge.h"
#include "engine/quant/top1.h"

namespace parity {
namespace {

// The target's runner, its session created (ORT refusing the model is this
// call's error, before any sample).
Result<std::unique_ptr<Runner>> MakeTarget(const RunnerJob& job, const DatasetEvalOptions& options) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> target,
                          WithContext(MakeOrtRunner(options.target), "the target"));
  PARITY_RETURN_IF_ERROR(target->Prepare(job));
  return target;
}

}  // namespace

Result<DatasetEvaluator> DatasetEvaluator::Create(const Model& model, const ReferenceModel& reference_model,
                                                  const DatasetReference& reference,
                                                  const DatasetEvalOptions& options) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<DatasetReferenceValues> values,
                          reference.Open(model, reference_model, options.model_path, options.allow_symlinks));
  // The target: MODEL as loaded, one kept session (ORT's CPU arena on, as
  // deployed), in process or on target.ort_library's release in a child.
  RunnerJob target_job{.model = options.label, .loaded = &model, .keep_session = true, .cpu_mem_arena = true};
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> target, MakeTarget(target_job, options));
  return DatasetEvaluator(std::move(values), std::move(target), std::move(target_job), options);
}

namespace {

DatasetCell CellOf(const TensorComparison& t) {
  DatasetCell c;
  if (t.status == Verdict::kUnchecked) {
    c.passed = false;
    c.score = std::numeric_limits<double>::infinity();
    c.cosine = 0;
    return c;
  }
  const TensorMetrics& m = t.metrics;
  c.max_abs = m.max_abs;
  c.cosine = m.cosine;
  c.snr_db = m.snr_db;
  c.mismatch_share = m.count > 0 ? static_cast<double>(m.mismatches) / static_cast<double>(m.count) : 0.0;
  c.score = t.score;  // the judge's: a mixed-scale output's is its slices'
  c.passed = t.status == Verdict::kPass;
  return c;
}

}  // namespace

Result<std::vector<DatasetCell>> DatasetEvaluator::Evaluate(const Sample& sample, const TensorSet& ref) const {
  RunnerJob target_job = target_job_;  // its errors name the sample
  target_job.sample = sample.name;
  PARITY_ASSIGN_OR_RETURN(TensorSet test, target_->Run(target_job, sample.tensors));
  CompareOptions compare;
  compare.policy = options_.policy;
  PARITY_ASSIGN_OR_RETURN(SetComparison cmp,
                          WithContext(CompareSets(ref, test, compare), fmt::format("sample '{}'", sample.name)));
  std::vector<Top1Agreement> top1;
  AddTop1(ref, test, top1);
  const std::vector<std::string>& outputs = reference_->outputs();
  std::vector<DatasetCell> cells(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    cells[i] = {.cosine = 0, .score = std::numeric_limits<double>::infinity(), .passed = false};
    for (const TensorComparison& t : cmp.tensors)
      if (t.name == outputs[i]) cells[i] = CellOf(t);
    for (const Top1Agreement& a : top1)
      if (a.output == outputs[i]) {
        cells[i].top1_rows = a.rows;
        cells[i].top1_agree = a.agree;
      }
  }
  return cells;
}

}  // namespace parity
