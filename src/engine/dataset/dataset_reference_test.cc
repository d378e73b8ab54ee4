#include "engine/dataset/dataset_reference.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

using Args = std::vector<std::string>;

TEST(DatasetReference, StoredOutputsAreNotLocatedAndReachAWorker) {
  auto r = DatasetReference::Of(Reference{}, "/data/out", "check --dataset");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->Label(), "outputs:/data/out");
  EXPECT_NE(r->NotLocated().find("--reference-outputs"), std::string::npos);
  EXPECT_EQ(r->WorkerArgs("ref.json"), (Args{"--reference-config", "ref.json", "--reference-outputs", "/data/out"}));
  // The worker rebuilds the same reference from those arguments.
  const DatasetReference w = DatasetReference::FromWorker(RunConfig{}, "", "/data/out");
  EXPECT_EQ(w.Label(), r->Label());
  EXPECT_EQ(w.WorkerArgs("ref.json"), r->WorkerArgs("ref.json"));
}

TEST(DatasetReference, AReferenceModelBesideStoredOutputsIsTheUsersMistake) {
  const Reference model{.kind = Reference::Kind::kModel, .path = "/m/float.onnx"};
  auto r = DatasetReference::Of(model, "/data/out", "check --dataset");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
}

// Healthy twins: an ORT reference (a model on another release, MODEL at a
// config) is located, and a worker given its arguments rebuilds it.
TEST(DatasetReference, AnOrtReferenceIsLocatedAndReachesAWorker) {
  Reference model{.kind = Reference::Kind::kModel, .path = "/m/float.onnx"};
  model.config.ort_library = "/lib/libonnxruntime.so.1.29.0";
  auto r = DatasetReference::Of(model, "", "check --dataset");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->NotLocated(), "");
  EXPECT_TRUE(r->Label().ends_with(" on /lib/libonnxruntime.so.1.29.0")) << r->Label();
  EXPECT_EQ(r->WorkerArgs("ref.json"), (Args{"--reference-config", "ref.json", "--reference-model", "/m/float.onnx"}));
  const DatasetReference w = DatasetReference::FromWorker(model.config, "/m/float.onnx", "");
  EXPECT_EQ(w.Label(), r->Label());
  EXPECT_EQ(w.WorkerArgs("ref.json"), r->WorkerArgs("ref.json"));

  auto config = DatasetReference::Of(Reference{}, "", "check --dataset");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->NotLocated(), "");
  EXPECT_EQ(config->WorkerArgs("ref.json"), (Args{"--reference-config", "ref.json"}));
  EXPECT_EQ(DatasetReference::FromWorker(RunConfig{}, "", "").Label(), config->Label());
}

}  // namespace
}  // namespace parity
