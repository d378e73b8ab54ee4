// PyTorch dump manifest.json text (docs/contract.md (""Files"")) -> LoadTorchDump, then
// what alignment asks of it: leaf flags, descriptions, and the first layers'
// files (which must be refused cleanly when they escape the directory, are
// missing, or are the manifest itself).
#include <filesystem>

#include "engine/torch/torch_dump.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  // A scratch dump directory holding only manifest.json.
  static const struct ScratchDir {
    ScratchDir() { std::filesystem::create_directories(path); }
    ~ScratchDir() { std::filesystem::remove_all(path); }
    std::filesystem::path path = fuzz::ScratchFile("_dump").path();
  } scratch;
  const std::filesystem::path& dir = scratch.path;
  fuzz::ScratchFile manifest(dir / "manifest.json");
  manifest.Write(data, size);
  auto dump = LoadTorchDump(dir);
  fuzz::CheckError(dump);
  if (!dump) return 0;
  for (size_t i = 0; i < dump->layers.size(); ++i) {
    (void)dump->IsLeaf(i);
    (void)TorchDump::Describe(dump->layers[i]);
    if (i < 4) fuzz::CheckError(LoadLayer(*dump, dump->layers[i]));
  }
  fuzz::CheckError(LoadTorchInputs(*dump));
  return 0;
}
