// Baseline manifest.json text (docs/baseline.md) -> ParseManifest, as
// `baseline verify` and `baseline --overwrite` read it, then the manifest's
// config as a stored config (docs/security.md): it must never throw, and an
// accepted config must never name a file for ORT to write.
#include <algorithm>
#include <string_view>

#include "core/run_config.h"
#include "engine/baseline/baseline_internal.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = baseline_internal::ParseManifest(text, "manifest.json");
  fuzz::CheckError(parsed);
  if (!parsed) return 0;
  if (parsed->samples.empty()) fuzz::Fail("a manifest without samples was accepted");
  for (const auto& s : parsed->samples) {
    if (s.files.empty()) fuzz::Fail("a sample without files was accepted");
    for (const auto& f : s.files) {
      if (f.file.empty() || f.file.front() == '/') fuzz::Fail("a file path that is not relative was accepted");
      const std::filesystem::path p(f.file);
      if (std::any_of(p.begin(), p.end(), [](const auto& part) { return part == ".."; }))
        fuzz::Fail("a file path with '..' was accepted");
    }
  }
  if (parsed->json.contains("config")) {
    auto config = RunConfigFromJson(parsed->json["config"], ConfigOrigin::kStored);
    fuzz::CheckError(config);
    if (config) {
      if (!config->optimized_model_path.empty()) fuzz::Fail("a stored config names optimized_model_path");
      for (const auto& [key, value] : config->session_entries)
        if (std::find(std::begin(kStoredSessionConfigKeys), std::end(kStoredSessionConfigKeys), key) ==
            std::end(kStoredSessionConfigKeys))
          fuzz::Fail("a stored config carries session entry " + key);
    }
  }
  return 0;
}
