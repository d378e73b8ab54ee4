// .npz bytes (through a scratch file: libzip opens archives by path) ->
// TensorSet, then the SAMPLE/INPUT split. Limits are lowered so that an
// input may not make the harness allocate more than a few MiB.
#include "core/npz.h"
#include "core/tensor_files.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  static fuzz::ScratchFile scratch(".npz");
  const auto& path = scratch.Write(data, size);
  NpzReadOptions options;
  options.max_entry_bytes = 64 << 20;
  options.ratio_check_above_bytes = 1 << 20;
  auto set = ReadNpz(path, options);
  fuzz::CheckError(set);
  if (!set) return 0;
  auto samples = SplitSamples(*set);
  fuzz::CheckError(samples);
  return 0;
}
