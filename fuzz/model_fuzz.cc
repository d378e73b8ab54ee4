// ONNX model bytes -> Model::FromBytes -> Inspect -> Check (checker + shape
// inference) -> BuildGraphView: everything `parity inspect` and the graph
// stages do with a model file before ORT sees it.
#include "fuzz/fuzz_util.h"
#include "onnx/graph.h"
#include "onnx/inspect.h"
#include "onnx/model.h"
#include "onnx/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  // No base directory: external data references are refused, never read.
  auto m = Model::FromBytes({reinterpret_cast<const char*>(data), size}, "fuzz.onnx");
  fuzz::CheckError(m);
  if (!m) return 0;
  const ModelInfo info = Inspect(*m);
  if (info.node_count < 0 || info.initializer_count < 0) fuzz::Fail("negative counts");
  const std::vector<Finding> findings = Check(*m);
  for (const Finding& f : findings)
    if (f.stage.empty()) fuzz::Fail("finding without a stage");
  auto g = BuildGraphView(*m);
  fuzz::CheckError(g);
  if (g) {
    (void)IntermediateTensors(*g);
    if (g->nodes.size() != static_cast<size_t>(info.node_count)) fuzz::Fail("graph view lost nodes");
  }
  return 0;
}
