// A model holding one STRING initializer whose dims and string_data come from
// the input (issue 29, probe 2: dims [2e8] with one entry made ORT allocate
// 6.3 GB before parity looked). Model::FromBytes must refuse every tensor
// whose entries do not match its dims (negative dims, a product that
// overflows, raw_data on a STRING tensor) and may load only one that holds
// exactly one entry per element: nothing is allocated from the dims alone.
//
// Input recipe: byte 0 = number of dims (mod 5); 8 bytes per dim
// (little-endian int64); 1 byte = number of entries; per entry 1 length byte
// and its bytes; 1 flag byte (bit 0: also set raw_data).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "onnx/model.h"

namespace {

// Protocol buffer wire format, the few field kinds needed here.
struct Wire {
  std::string bytes;
  Wire& Varint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) bytes.push_back(static_cast<char>((v & 0x7F) | 0x80));
    bytes.push_back(static_cast<char>(v));
    return *this;
  }
  Wire& Int(int field, int64_t v) { return Varint(static_cast<uint64_t>(field) << 3).Varint(static_cast<uint64_t>(v)); }
  Wire& Bytes(int field, const std::string& v) {
    Varint((static_cast<uint64_t>(field) << 3) | 2).Varint(v.size());
    bytes += v;
    return *this;
  }
};

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  uint8_t Byte() { return pos < size ? data[pos++] : 0; }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return static_cast<int64_t>(v);
  }
};

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += std::to_string(d) + " ";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  Reader in{data, size};
  std::vector<int64_t> dims(in.Byte() % 5);
  for (int64_t& d : dims) d = in.Int64();
  std::vector<std::string> entries(in.Byte());
  for (std::string& e : entries) {
    const size_t n = in.Byte();
    for (size_t i = 0; i < n; ++i) e.push_back(static_cast<char>(in.Byte()));
  }
  const bool raw = in.Byte() & 1;

  Wire tensor;  // TensorProto: dims (1), data_type (2) = STRING (8), string_data (6), name (8), raw_data (9)
  for (int64_t d : dims) tensor.Int(1, d);
  tensor.Int(2, 8);
  for (const std::string& e : entries) tensor.Bytes(6, e);
  tensor.Bytes(8, "s");
  if (raw) tensor.Bytes(9, "raw");
  Wire output;  // ValueInfoProto: name (1)
  output.Bytes(1, "s");
  Wire graph;  // GraphProto: name (2), initializer (5), output (12)
  graph.Bytes(2, "g").Bytes(5, tensor.bytes).Bytes(12, output.bytes);
  Wire opset;  // OperatorSetIdProto: version (2)
  opset.Int(2, 17);
  Wire model;  // ModelProto: ir_version (1), graph (7), opset_import (8)
  model.Int(1, 8).Bytes(7, graph.bytes).Bytes(8, opset.bytes);

  auto m = Model::FromBytes(model.bytes, "fuzz.onnx");
  fuzz::CheckError(m);
  if (!m) return 0;
  // Loaded: the dims must be honest, one entry per element.
  int64_t count = 1;
  for (int64_t d : dims)
    if (d < 0) fuzz::Fail("a STRING tensor with a negative dim loaded");
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();  // no element, whatever the rest say
  for (int64_t d : empty ? std::vector<int64_t>{0} : dims) {
    if (d == 0) {
      count = 0;
      break;
    }
    if (count > std::numeric_limits<int64_t>::max() / d)
      fuzz::Fail("a STRING tensor whose dims overflow loaded (" + Dims(dims) + ")");
    count *= d;
  }
  if (count != static_cast<int64_t>(entries.size()))
    fuzz::Fail("a STRING tensor of " + std::to_string(count) + " elements (" + Dims(dims) + ") loaded with " +
               std::to_string(entries.size()) + " entries");
  if (raw) fuzz::Fail("a STRING tensor with raw_data loaded");
  return 0;
}
