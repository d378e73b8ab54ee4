// check and locate keep one ORT session alive at a time (issue 26): each
// session holds its own copy of the weights, so two alive at once double the
// peak. Counted by ort::PeakLiveSessions over a passing check (its layer
// curve included), a failing one against --reference-model (locate with
// ablation and the model-difference pass), and locate itself.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/testing/temp_dir.h"
#include "engine/check/check.h"
#include "engine/inputs/random_sample.h"
#include "engine/locate/locate.h"
#include "engine/run/optimized_plan.h"
#include "engine/runner/session_run.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "ort/run_count.h"
#include "ort/session.h"

namespace parity {
namespace {

CheckOptions SessionsOptions(const std::filesystem::path& model) {
  CheckOptions o;
  o.model_path = model.string();
  o.target.opt_level = OptLevel::kAll;
  o.latency_runs = 2;
  o.latency_warmup = 0;
  return o;
}

TEST(CheckSessions, APassingCheckHoldsOneSessionAtATime) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  ort::ResetPeakLiveSessions();
  auto report = RunCheck(SessionsOptions(dir / "m.onnx"));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->overall, Verdict::kPass);
  EXPECT_FALSE(report->layer_curve.empty());  // the curve's sessions were made too
  EXPECT_EQ(ort::PeakLiveSessions(), 1);
  EXPECT_EQ(ort::LiveSessions(), 0);
}

// A passing check loads the model four times: the reference, the target
// (whose plan, saved as it loads, is the layer curve's), and the curve's two
// observations. Before, the curve planned the target once more (five). A
// fifth session is the probe of the target's optimizers (prepacking off,
// check_reference_same_plan.h): this model's Convs are fused, so the check keeps both.
TEST(CheckSessions, APassingChecksCurveReusesTheTargetsPlan) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  const int before = ort::SessionsCreated();
  auto report = RunCheck(SessionsOptions(dir / "m.onnx"));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->overall, Verdict::kPass);
  EXPECT_FALSE(report->layer_curve.empty());
  EXPECT_EQ(ort::SessionsCreated() - before, 5);
}

// Issue 55: every ORT run a check makes is counted in the step that made it
// (report.ort_runs), the reference's pass first; the layer curve of a
// passing check is the locate step's.
TEST(CheckSessions, EveryOrtRunOfACheckIsCountedInItsStep) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  const int64_t before = ort::OrtRuns();
  auto report = RunCheck(SessionsOptions(dir / "m.onnx"));
  ASSERT_TRUE(report) << report.error().message();
  const int64_t made = ort::OrtRuns() - before;
  int64_t counted = 0;
  for (const StepRuns& s : report->ort_runs) {
    EXPECT_GT(s.runs, 0) << s.step;
    counted += s.runs;
  }
  EXPECT_EQ(counted, made);
  ASSERT_FALSE(report->ort_runs.empty());
  EXPECT_EQ(report->ort_runs.front().step, "reference pass");
  EXPECT_GE(report->ort_runs.front().runs, static_cast<int64_t>(report->samples.size()));
  EXPECT_TRUE(std::any_of(report->ort_runs.begin(), report->ort_runs.end(),
                          [](const StepRuns& s) { return s.step == "layer curve / locate"; }));
}

// Issue 43: a passing check's curve is an extra with a time budget. Over it
// (estimated from the reference's creation and run), the check loads the
// model twice, not four times (the target's plan is not saved either; the
// third session is the probe of the target's optimizers), and a
// note says why the curve is missing; a failing check would still localize.
TEST(CheckSessions, ACurveOverItsBudgetIsNotComputedAndItsSessionsNotMade) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  for (const double budget : {1e-9, 0.0}) {
    CheckOptions o = SessionsOptions(dir / "m.onnx");
    o.curve_seconds = budget;
    const int before = ort::SessionsCreated();
    auto report = RunCheck(o);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->overall, Verdict::kPass);
    EXPECT_TRUE(report->layer_curve.empty());
    EXPECT_EQ(ort::SessionsCreated() - before, 3) << budget;
    const std::string why = budget > 0 ? "estimated at" : "--curve-seconds 0";
    bool noted = false;
    for (const auto& note : report->notes) noted |= note.starts_with("layer_curve not computed") && note.find(why) != std::string::npos;
    EXPECT_TRUE(noted) << budget;
  }
}

// Locate given the caller's plan (with the untouched outputs of the sample)
// and the reference's values creates neither session again, and judges every
// tensor as it does when it makes them itself.
TEST(CheckSessions, LocateReadsTheCallersPlanAndReferenceValues) {
  const Model model = WithNodeNames(ResidualCnn());
  auto sample = RandomSample(model, 3);
  auto view = BuildGraphView(model, {.infer_shapes = false});
  auto scratch = ScratchDir::Create("test_plan");
  ASSERT_TRUE(sample && view && scratch);
  LocateOptions o;
  o.target.opt_level = OptLevel::kAll;
  o.ablation = false;
  auto own = Locate(model, nullptr, *sample, o);
  ASSERT_TRUE(own) << own.error().message();

  auto plan = CreatePlannedSession(model, *view, o.target, "m", *scratch / "t.onnx", ort::SessionExtras{});
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_TRUE(KeepUntouched(*plan, *sample, "m"));
  EXPECT_EQ(plan->session(), nullptr);
  TensorSet values;  // the reference's every tensor, as check --torch's run against PyTorch keeps them
  {
    auto every = ObserveAllTensors(model);
    ASSERT_TRUE(every);
    auto reference = CreateSession(every->model, o.reference, "m");
    ASSERT_TRUE(reference);
    auto run = RunSample(*reference, *sample, "m");
    ASSERT_TRUE(run);
    values = std::move(*run);
  }

  LocateOptions given = o;
  given.target_plan = &*plan;
  given.reference_values = &values;
  auto reused = Locate(model, nullptr, *sample, given);
  ASSERT_TRUE(reused) << reused.error().message();
  EXPECT_EQ(reused->sessions_created, own->sessions_created - 2);
  ASSERT_EQ(reused->tensors.size(), own->tensors.size());
  size_t judged = 0;
  for (size_t i = 0; i < own->tensors.size(); ++i) {
    EXPECT_EQ(reused->tensors[i].status, own->tensors[i].status) << own->tensors[i].name;
    if (own->tensors[i].metrics && reused->tensors[i].metrics) {
      EXPECT_EQ(reused->tensors[i].metrics->max_abs, own->tensors[i].metrics->max_abs) << own->tensors[i].name;
      ++judged;
    }
  }
  EXPECT_GT(judged, 0u);
  EXPECT_EQ(reused->observer_check, own->observer_check);
}

TEST(CheckSessions, AFailingCheckAndItsLocateHoldOneSessionAtATime) {
  testing::TempDir dir;
  const Model healthy = WithNodeNames(ResidualCnn());
  auto view = BuildGraphView(healthy, {.infer_shapes = false});
  ASSERT_TRUE(view);
  std::string weight;
  for (const auto& n : view->nodes)
    if (n.op_type == "Conv") weight = n.inputs[1];
  auto planted = ScaleInitializer(healthy, weight, 1.5);
  ASSERT_TRUE(planted) << planted.error().message();
  ASSERT_TRUE(healthy.Save(dir / "healthy.onnx"));
  ASSERT_TRUE(planted->Save(dir / "planted.onnx"));
  CheckOptions o = SessionsOptions(dir / "planted.onnx");
  o.reference.kind = Reference::Kind::kModel;
  o.reference.path = dir / "healthy.onnx";
  ort::ResetPeakLiveSessions();
  auto report = RunCheck(o);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->overall, Verdict::kFail);
  ASSERT_TRUE(report->locate.has_value());  // the failing sample was located
  EXPECT_TRUE(report->locate->first_divergence.has_value());
  EXPECT_EQ(ort::PeakLiveSessions(), 1);
  EXPECT_EQ(ort::LiveSessions(), 0);

  // locate alone, ablation on: still one at a time.
  auto sample = RandomSample(healthy, 1);
  ASSERT_TRUE(sample);
  LocateOptions lo;
  lo.target.opt_level = OptLevel::kAll;
  ort::ResetPeakLiveSessions();
  auto located = Locate(healthy, &*planted, *sample, lo);
  ASSERT_TRUE(located) << located.error().message();
  EXPECT_TRUE(located->first_divergence.has_value());
  EXPECT_GT(located->sessions_created, 2);
  EXPECT_EQ(ort::PeakLiveSessions(), 1);
}


// The reference's outputs past the in-memory budget go to a scratch folder
// and are read back when judged: the same verdicts, sample by sample.
TEST(CheckSessions, ReferenceOutputsPastTheBudgetAreReadBackFromScratch) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  auto kept = RunCheck(SessionsOptions(dir / "m.onnx"));
  CheckOptions o = SessionsOptions(dir / "m.onnx");
  o.reference_outputs_in_memory = 0;  // every sample's outputs spilled
  auto spilled = RunCheck(o);
  ASSERT_TRUE(kept && spilled);
  ASSERT_EQ(kept->samples.size(), spilled->samples.size());
  ASSERT_GT(kept->samples.size(), 1u);
  for (size_t i = 0; i < kept->samples.size(); ++i) {
    const auto& a = kept->samples[i];
    const auto& b = spilled->samples[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.status, b.status) << a.name;
    EXPECT_EQ(a.behaviour, b.behaviour) << a.name;
    ASSERT_EQ(a.outputs.size(), b.outputs.size()) << a.name;
    for (size_t k = 0; k < a.outputs.size(); ++k) {
      EXPECT_EQ(a.outputs[k].output, b.outputs[k].output);
      EXPECT_EQ(a.outputs[k].comparison.metrics.max_abs, b.outputs[k].comparison.metrics.max_abs);
    }
  }
  EXPECT_EQ(kept->overall, spilled->overall);
  EXPECT_EQ(spilled->performance.size(), 2u);  // the reference was timed on a spilled sample too
}

}  // namespace
}  // namespace parity
