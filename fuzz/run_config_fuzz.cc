// Config JSON text -> RunConfig; a config that parses must print and parse
// back to the same label and JSON.
#include <nlohmann/json.hpp>

#include "core/run_config.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto config = RunConfigFromJson(j);
  fuzz::CheckError(config);
  if (!config) return 0;
  const nlohmann::json printed = RunConfigToJson(*config);
  auto back = RunConfigFromJson(printed);
  if (!back) fuzz::Fail("printed config does not parse: " + back.error().message());
  if (RunConfigToJson(*back) != printed || back->Label() != config->Label()) fuzz::Fail("round trip changed it");
  return 0;
}
