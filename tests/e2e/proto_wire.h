// A minimal protobuf wire-format writer for the e2e tests, so that a test
// controls every byte of a model (a negative dimension, an undefined tensor,
// a graph input that is also an output) without the protobuf library that
// the ONNX adapter hides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parity::e2e {

struct Pb {
  std::string bytes;
  Pb& Varint(uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
    return *this;
  }
  Pb& Int(int field, int64_t v) { return Varint(static_cast<uint64_t>(field) << 3).Varint(static_cast<uint64_t>(v)); }
  Pb& Bytes(int field, std::string_view v) {
    Varint((static_cast<uint64_t>(field) << 3) | 2).Varint(v.size());
    bytes.append(v);
    return *this;
  }
  Pb& Msg(int field, const Pb& m) { return Bytes(field, m.bytes); }
};

}  // namespace parity::e2e
