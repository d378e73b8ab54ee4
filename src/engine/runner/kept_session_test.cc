// Runner::kept_session: the in-process runner lends the session it keeps
// (check reads its creation time and metadata and times it); nothing else does.
#include <gtest/gtest.h>

#include "engine/runner/runner.h"
#include "onnx/builtin_models.h"
#include "onnx/inspect.h"
#include "ort/session.h"

namespace parity {
namespace {

TensorSet Ones(const Shape& shape) {
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.mutable_view<float>()) v = 1;
  TensorSet s;
  s.Set("input", t);
  return s;
}

TEST(KeptSession, TheInProcessRunnerLendsTheSessionItKeepsAndRunsOnIt) {
  const Model m = ConvBnRelu();
  auto runner = MakeSessionRunner({});
  const RunnerJob kept{.model = "convbnrelu", .loaded = &m, .keep_session = true};
  EXPECT_EQ(runner->kept_session(), nullptr);  // nothing prepared yet
  ASSERT_TRUE(runner->Prepare(kept));
  const ort::Session* session = runner->kept_session();
  ASSERT_NE(session, nullptr);
  std::vector<std::string> outputs;
  for (const auto& v : Inspect(m).outputs) outputs.push_back(v.name);
  EXPECT_EQ(session->output_names(), outputs);
  EXPECT_GT(session->creation_ms(), 0);
  // A run of the kept job runs on that very session, and gives what it gives.
  const TensorSet inputs = Ones({1, 3, 224, 224});
  auto via_runner = runner->Run(kept, inputs);
  ASSERT_TRUE(via_runner) << via_runner.error().message();
  EXPECT_EQ(runner->kept_session(), session);
  auto direct = session->Run(inputs);
  ASSERT_TRUE(direct) << direct.error().message();
  ASSERT_EQ(direct->size(), via_runner->size());
  for (size_t i = 0; i < direct->size(); ++i) EXPECT_TRUE((*direct)[i].tensor.BitwiseEquals((*via_runner)[i].tensor));
  // Its healthy twin: a job that keeps nothing releases the kept session first.
  ASSERT_TRUE(runner->Run({.model = "convbnrelu", .loaded = &m}, inputs));
  EXPECT_EQ(runner->kept_session(), nullptr);
}

TEST(KeptSession, AStoreLendsNoSession) {
  auto stored = MakeStoredRunner(Ones({1}), {.kind = RanWhat::Kind::kStored, .source = "values.npz"});
  ASSERT_TRUE(stored->Prepare({.model = "m.onnx", .keep_session = true}));
  EXPECT_EQ(stored->kept_session(), nullptr);
}

}  // namespace
}  // namespace parity
