// ONNX model bytes -> the inline-weights walk (onnx/weights_in_file.h), with
// a 16-byte threshold so that the small seeds' initializers are left in the
// "file" too. When the walk gives a model, every reference lies inside the
// bytes, and the model with each reference read back from them serializes
// exactly as protobuf's whole parse of the bytes does: the walk never
// accepts what protobuf refuses, nor reads anything differently.
#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <string>

#include "fuzz/fuzz_util.h"
#include "onnx/weights_in_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto walked = onnx_adapter::ParseLeavingWeightsInFile(bytes, "m.onnx", 16);
  if (!walked) return 0;
  onnx::ModelProto whole;
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  in.SetTotalBytesLimit(INT_MAX);
  if (!whole.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    fuzz::Fail("the walk accepted bytes protobuf refuses");
  for (auto& t : *walked->mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    size_t offset = 0, length = 0;
    std::string location;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "offset") offset = std::stoull(kv.value());
      if (kv.key() == "length") length = std::stoull(kv.value());
      if (kv.key() == "location") location = kv.value();
    }
    if (location != "m.onnx") fuzz::Fail("a reference to another file");
    if (offset > size || length > size - offset) fuzz::Fail("a reference outside the bytes");
    t.set_raw_data(std::string(bytes.substr(offset, length)));
    t.clear_external_data();
    t.clear_data_location();
  }
  if (walked->SerializeAsString() != whole.SerializeAsString())
    fuzz::Fail("the walked model, its weights read back, differs from protobuf's parse");
  return 0;
}
