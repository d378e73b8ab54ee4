// Tolerance policy JSON text -> TolerancePolicy; a policy that parses must
// print and parse back to the same JSON, and resolve for a float output.
#include <nlohmann/json.hpp>

#include "compare/tolerance.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto policy = TolerancePolicyFromJson(j);
  fuzz::CheckError(policy);
  if (!policy) return 0;
  const nlohmann::json printed = TolerancePolicyToJson(*policy);
  auto back = TolerancePolicyFromJson(printed);
  if (!back) fuzz::Fail("printed policy does not parse: " + back.error().message());
  if (TolerancePolicyToJson(*back) != printed) fuzz::Fail("round trip changed it");
  static const Tensor ref = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {0.1f, 0.9f, 0.5f, 0.5f});
  (void)Resolve("logits", ref, *policy);
  return 0;
}
