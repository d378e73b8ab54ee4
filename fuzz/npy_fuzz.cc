// .npy bytes -> Tensor; a tensor that parses must serialize and parse back
// to the same dtype, shape and bytes.
#include <cstring>

#include "core/npy.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  auto t = ParseNpy({reinterpret_cast<const std::byte*>(data), size});
  fuzz::CheckError(t);
  if (!t) return 0;
  auto image = SerializeNpy(*t);
  if (!image) fuzz::Fail("SerializeNpy failed on a parsed tensor: " + image.error().message());
  auto back = ParseNpy(*image);
  if (!back) fuzz::Fail("re-parse failed: " + back.error().message());
  if (back->dtype() != t->dtype() || back->shape() != t->shape() || back->byte_size() != t->byte_size() ||
      (t->byte_size() && std::memcmp(back->data(), t->data(), t->byte_size()) != 0))
    fuzz::Fail("round trip changed the tensor");
  return 0;
}
