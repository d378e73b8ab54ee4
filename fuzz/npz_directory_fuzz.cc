// The archive directory walk (issue 29, probe 1: 200 central-directory
// entries pointing at one ~1000 MiB stream asked for ~200 GB). The input is a
// recipe for a zip whose one honest stored .npy is followed by a central
// directory of up to 64 entries whose names, offsets, methods, CRCs and
// declared sizes come from the input: shared and overlapping streams, lying
// sizes, duplicate names. ReadNpz, with a 64 MiB budget, must refuse or read
// at most that many bytes, one tensor per entry, and never crash.
//
// Recipe: byte 0 = entries (mod 65); per entry 14 bytes: name index (mod 4),
// method (0 stored, 8 deflate, else as is), offset selector (0: the honest
// header, else a raw u16 offset), u32 compressed size, u32 size, u32 CRC
// (0: the honest CRC), a flag byte (bit 0: honest sizes).
#include <zlib.h>

#include <cstring>
#include <string>

#include "core/npy.h"
#include "core/npz.h"
#include "fuzz/fuzz_util.h"

namespace {

struct Bytes {
  std::string b;
  void U16(uint32_t v) { b.push_back(static_cast<char>(v)), b.push_back(static_cast<char>(v >> 8)); }
  void U32(uint32_t v) { U16(v & 0xFFFF), U16(v >> 16); }
};

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  uint8_t Byte() { return pos < size ? data[pos++] : 0; }
  uint32_t U16() { return Byte() | (uint32_t{Byte()} << 8); }
  uint32_t U32() { return U16() | (U16() << 16); }
};

// An honest stored x.npy: float32 [4].
std::string Payload() {
  parity::Tensor t(parity::DType::kFloat32, {4});
  auto bytes = parity::SerializeNpy(t);
  if (!bytes) parity::fuzz::Fail("SerializeNpy failed on a float32 [4]");
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  static const std::string payload = Payload();
  static const uint32_t crc =
      static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(payload.data()), payload.size()));
  static const char* const kNames[] = {"x.npy", "y.npy", "s/x.npy", "x.npy"};
  Reader in{data, size};
  Bytes zip;
  // The one local header and its data, at offset 0.
  zip.U32(0x04034b50), zip.U16(20), zip.U16(0), zip.U16(0), zip.U16(0), zip.U16(0x21);
  zip.U32(crc), zip.U32(payload.size()), zip.U32(payload.size()), zip.U16(5), zip.U16(0);
  zip.b += "x.npy" + payload;
  const size_t cd_offset = zip.b.size();
  const int entries = in.Byte() % 65;
  for (int i = 0; i < entries; ++i) {
    const char* name = kNames[in.Byte() % 4];
    const uint8_t method = in.Byte();
    const uint8_t offset_sel = in.Byte();
    const uint32_t offset = offset_sel == 0 ? 0 : in.U16();
    uint32_t comp = in.U32(), full = in.U32(), entry_crc = in.U32();
    if (in.Byte() & 1) comp = full = static_cast<uint32_t>(payload.size());
    if (entry_crc == 0) entry_crc = crc;
    zip.U32(0x02014b50), zip.U16(20), zip.U16(20), zip.U16(0);
    zip.U16(method == 0 || method == 8 ? method : method & 0x1F), zip.U16(0), zip.U16(0x21);
    zip.U32(entry_crc), zip.U32(comp), zip.U32(full);
    zip.U16(static_cast<uint32_t>(std::strlen(name))), zip.U16(0), zip.U16(0), zip.U16(0), zip.U16(0);
    zip.U32(0), zip.U32(offset);
    zip.b += name;
  }
  const size_t cd_size = zip.b.size() - cd_offset;
  zip.U32(0x06054b50), zip.U16(0), zip.U16(0), zip.U16(entries), zip.U16(entries);
  zip.U32(static_cast<uint32_t>(cd_size)), zip.U32(static_cast<uint32_t>(cd_offset)), zip.U16(0);

  static fuzz::ScratchFile scratch(".npz");
  const auto& path = scratch.Write(reinterpret_cast<const uint8_t*>(zip.b.data()), zip.b.size());
  NpzReadOptions options;
  options.max_entry_bytes = 64 << 20;
  options.max_total_bytes = 64 << 20;
  options.ratio_check_above_bytes = 1 << 20;
  auto set = ReadNpz(path, options);
  fuzz::CheckError(set);
  if (!set) return 0;
  if (static_cast<int>(set->size()) > entries) fuzz::Fail("more tensors than directory entries");
  uint64_t total = 0;
  for (const auto& nt : *set) total += nt.tensor.byte_size();
  if (total > options.max_total_bytes) fuzz::Fail("read more than the archive budget");
  return 0;
}
