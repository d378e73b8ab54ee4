// One session for both configs when the target's optimizers change nothing
// in the graph (check_reference_same_plan.h), and two, as before, when one does or the
// configs differ otherwise.
#include "engine/check/check_reference_same_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/testing/temp_dir.h"
#include "engine/check/check.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/test_util.h"
#include "ort/session.h"

namespace parity {
namespace {

constexpr std::string_view kServedBoth = "one session served both";

CheckOptions Options(const std::filesystem::path& model) {
  CheckOptions o;
  o.model_path = model.string();
  o.target.opt_level = OptLevel::kAll;
  o.latency_runs = 2;
  o.latency_warmup = 0;
  o.curve_seconds = 0;  // the reference's and the target's sessions alone (and the probe)
  return o;
}

bool Noted(const CheckReport& r) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [](const std::string& n) { return n.find(kServedBoth) != std::string::npos; });
}

int64_t Runs(const CheckReport& r, std::string_view step) {
  int64_t runs = 0;
  for (const StepRuns& s : r.ort_runs)
    if (step.empty() || s.step == step) runs += s.runs;
  return runs;
}

struct Counted {
  CheckReport report;
  int sessions = 0;
};

Counted Check(const CheckOptions& o) {
  ort::ResetPeakLiveSessions();
  const int before = ort::SessionsCreated();
  auto report = RunCheck(o);
  EXPECT_TRUE(report) << report.error().message();
  EXPECT_EQ(ort::PeakLiveSessions(), 1);
  EXPECT_EQ(ort::LiveSessions(), 0);
  return {.report = report ? std::move(*report) : CheckReport{}, .sessions = ort::SessionsCreated() - before};
}

TEST(CheckSamePlan, OnlyTheOptimizationsMayDiffer) {
  CheckOptions o;
  o.target.opt_level = OptLevel::kAll;
  EXPECT_TRUE(check_internal::DiffersOnlyInOptimizations(o));
  o.target.disabled_optimizers = {"LayerNormFusionL1"};
  EXPECT_TRUE(check_internal::DiffersOnlyInOptimizations(o));
  CheckOptions cuda = o;  // another EP may change its plan by the level unlogged
  cuda.target.providers = cuda.reference.config.providers = {"cuda", "cpu"};
  EXPECT_FALSE(check_internal::DiffersOnlyInOptimizations(cuda));
  for (auto change : {+[](RunConfig& c) { c.intra_op_threads = 1; },
                      +[](RunConfig& c) { c.session_entries["session.set_denormal_as_zero"] = "1"; },
                      +[](RunConfig& c) { c.providers = {"cuda", "cpu"}; },
                      +[](RunConfig& c) { c.ort_library = "/elsewhere/libonnxruntime.so"; },
                      +[](RunConfig& c) { c.optimized_model_path = "/tmp/o.onnx"; }}) {
    CheckOptions other = o;
    change(other.target);
    EXPECT_FALSE(check_internal::DiffersOnlyInOptimizations(other)) << other.target.Label();
  }
  CheckOptions same;  // nothing differs: nothing to share either
  EXPECT_FALSE(check_internal::DiffersOnlyInOptimizations(same));
  CheckOptions model = o;
  model.reference = Reference{.kind = Reference::Kind::kModel, .path = "ref.onnx"};
  EXPECT_FALSE(check_internal::DiffersOnlyInOptimizations(model));
}

// Relu [1, 2]: none of ORT's transformers at `all` changes it. The reference
// at `disable` is served by the target's session: one model load (and the
// probe), each sample run once, the note, the same verdicts and the same
// values as with two sessions.
TEST(CheckSamePlan, AnUnchangedPlanRunsOneSessionForBoth) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(testing::ReluModel()).Save(dir / "m.onnx"));
  const Counted one = Check(Options(dir / "m.onnx"));
  EXPECT_TRUE(Noted(one.report));
  EXPECT_EQ(one.sessions, 2);  // the probe and the one session
  // Its twin: a reference config that differs in threads too loads two.
  CheckOptions o = Options(dir / "m.onnx");
  o.reference.config.intra_op_threads = 1;
  const Counted two = Check(o);
  EXPECT_FALSE(Noted(two.report));
  EXPECT_EQ(two.sessions, 2);  // no probe: the reference and the target
  // Each sample ran once, on the reference's pass: the numerics and
  // robustness stages judge its values without running the target again.
  EXPECT_EQ(Runs(one.report, "numerics"), 0);
  EXPECT_GT(Runs(two.report, "numerics"), 0);
  EXPECT_LT(Runs(one.report, ""), Runs(two.report, ""));
  // One session timed, under the target's config: no row of a `disable`
  // session that never ran.
  ASSERT_EQ(one.report.performance.size(), 1u);
  EXPECT_EQ(one.report.performance[0].config, "all");
  // The pass runs each sample once and times nothing (the session is timed
  // once, in the runtime stage): determinism's re-run, which is the first of
  // the --runs 2 timed, and one more.
  EXPECT_EQ(Runs(one.report, "reference pass"), static_cast<int64_t>(one.report.samples.size()));
  EXPECT_EQ(Runs(one.report, "runtime"), 2);
  EXPECT_EQ(one.report.performance[0].latency.runs, 2);
  EXPECT_EQ(one.report.performance[0].latency.reused_runs, 1);
  EXPECT_EQ(two.report.performance.size(), 2u);
  EXPECT_EQ(one.report.overall, Verdict::kPass);
  EXPECT_EQ(one.report.overall, two.report.overall);
  ASSERT_EQ(one.report.samples.size(), two.report.samples.size());
  for (size_t i = 0; i < one.report.samples.size(); ++i) {
    EXPECT_EQ(one.report.samples[i].status, two.report.samples[i].status) << one.report.samples[i].name;
    for (const auto& out : one.report.samples[i].outputs) EXPECT_EQ(out.comparison.metrics.max_abs, 0) << out.output;
  }
}

// ResidualCnn: its Convs are fused at `all` (NCHWc, Conv+BN+Relu). The probe
// sees it and the check loads the reference and the target, as before.
TEST(CheckSamePlan, AChangedPlanKeepsTwoSessions) {
  testing::TempDir dir;
  ASSERT_TRUE(WithNodeNames(ResidualCnn()).Save(dir / "m.onnx"));
  const Counted two = Check(Options(dir / "m.onnx"));
  EXPECT_FALSE(Noted(two.report));
  EXPECT_EQ(two.sessions, 3);  // the probe, the reference, the target
  EXPECT_EQ(two.report.overall, Verdict::kPass);
}

}  // namespace
}  // namespace parity
