// ONNX TensorProto bytes (a .pb file) -> Tensor; a tensor that reads must
// write and read back bitwise equal, with the same name.
#include "fuzz/fuzz_util.h"
#include "onnx/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  static fuzz::ScratchFile scratch(".pb");
  static fuzz::ScratchFile scratch_out("_out.pb");
  std::string name;
  auto t = ReadTensorProtoFile(scratch.Write(data, size), &name);
  fuzz::CheckError(t);
  if (!t) return 0;
  if (Status w = WriteTensorProtoFile(scratch_out.path(), name, *t); !w)
    fuzz::Fail("WriteTensorProtoFile failed on a tensor it read: " + w.error().message());
  std::string name_back;
  auto back = ReadTensorProtoFile(scratch_out.path(), &name_back);
  if (!back) fuzz::Fail("re-read failed: " + back.error().message());
  if (name_back != name || !back->BitwiseEquals(*t)) fuzz::Fail("round trip changed the tensor");
  return 0;
}
