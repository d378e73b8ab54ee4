// External data resolution (docs/security.md): a model whose tensors, dense
// and sparse, in the graph, a subgraph or a function, name locations chosen
// by the fuzzer among hostile ones (absolute, "..", a symlink out of the
// folder, a symlinked folder, a FIFO, /dev/zero, a symlink loop, a
// directory) and honest ones, with fuzzed offsets, lengths and shapes.
// Invariants: a load never blocks, never reads outside the folder (a model
// naming an escaping location is refused), and inlines at most the bytes of
// the files it read (no region claimed twice).
#include <fuzzer/FuzzedDataProvider.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "onnx/model.h"
#include "onnx/model_internal.h"

namespace {

namespace fs = std::filesystem;

constexpr int64_t kDataBytes = 4096;
// Index < kFirstHostile: inside the folder and readable.
const char* const kLocations[] = {"data.bin",       "link_in.bin", "sub/inner.bin", "./data.bin",
                                  "../outside.bin", "link_out.bin", "linkdir/outside.bin", "fifo.bin",
                                  "zero.bin",       "loop.bin",     "sub",           "/etc/hostname",
                                  "missing.bin",    "",             "data.bin/x"};
constexpr size_t kFirstHostile = 4;

struct Scratch {
  fs::path root = parity::fuzz::ScratchFile("_extdata").path();
  fs::path model_dir = root / "model";
  Scratch() {
    fs::remove_all(root);
    fs::create_directories(model_dir / "sub");
    fs::create_directories(root / "elsewhere");
    for (const fs::path& p : {model_dir / "data.bin", model_dir / "sub" / "inner.bin", root / "outside.bin",
                              root / "elsewhere" / "outside.bin"})
      std::ofstream(p, std::ios::binary) << std::string(kDataBytes, '\x01');
    fs::create_symlink("data.bin", model_dir / "link_in.bin");
    fs::create_symlink(root / "outside.bin", model_dir / "link_out.bin");
    fs::create_directory_symlink(root / "elsewhere", model_dir / "linkdir");
    fs::create_symlink("/dev/zero", model_dir / "zero.bin");
    fs::create_symlink("loop.bin", model_dir / "loop.bin");
    ::mkfifo((model_dir / "fifo.bin").c_str(), 0600);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

// Fills `t` as an external float tensor chosen by the fuzzer; returns the
// location index.
size_t MakeTensor(FuzzedDataProvider& in, onnx::TensorProto* t, int i) {
  const size_t loc = in.ConsumeIntegralInRange<size_t>(0, std::size(kLocations) - 1);
  t->set_name("t" + std::to_string(i));
  t->set_data_type(in.ConsumeBool() ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  const int rank = in.ConsumeIntegralInRange<int>(0, 3);
  for (int d = 0; d < rank; ++d) t->add_dims(in.ConsumeIntegralInRange<int64_t>(-2, 2048));
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", kLocations[loc]);
  if (in.ConsumeBool()) add("offset", std::to_string(in.ConsumeIntegralInRange<int64_t>(-8, kDataBytes + 8)));
  if (in.ConsumeBool()) add("length", std::to_string(in.ConsumeIntegralInRange<int64_t>(-8, 3 * kDataBytes)));
  if (in.ConsumeBool()) add("offset", in.ConsumeRandomLengthString(12));
  return loc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  static const Scratch scratch;
  FuzzedDataProvider in(data, size);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  auto* node = g->add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  g->add_output()->set_name("y");
  bool hostile = false;
  const int n = in.ConsumeIntegralInRange<int>(0, 12);
  for (int i = 0; i < n; ++i) {
    onnx::TensorProto* t = nullptr;
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0:
        t = g->add_initializer();
        break;
      case 1: {
        auto* s = g->add_sparse_initializer();
        t = in.ConsumeBool() ? s->mutable_values() : s->mutable_indices();
        break;
      }
      case 2: {
        auto* c = g->add_node();
        c->set_op_type("Constant");
        c->add_output("c" + std::to_string(i));
        auto* a = c->add_attribute();
        a->set_name("sparse_value");
        t = a->mutable_sparse_tensor()->mutable_values();
        break;
      }
      case 3: {
        auto* sub = node->add_attribute();
        sub->set_name("body");
        t = sub->mutable_g()->add_initializer();
        break;
      }
      default: {
        auto* f = m.add_functions();
        f->set_name("f" + std::to_string(i));
        auto* fn = f->add_node();
        fn->set_op_type("Constant");
        t = fn->add_attribute()->mutable_t();
        break;
      }
    }
    hostile = MakeTensor(in, t, i) >= kFirstHostile || hostile;
  }
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return 0;
  auto model = Model::FromBytes(bytes, "fuzz.onnx", scratch.model_dir);
  fuzz::CheckError(model);
  if (!model) return 0;
  if (hostile) fuzz::Fail("a model naming a location outside its folder (or not a regular file) was loaded");
  // Everything was inlined, and no more bytes than the two readable files hold.
  int64_t inlined = 0;
  auto count = [&](onnx::TensorProto& t) -> Status {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) fuzz::Fail("a tensor is still external after load");
    inlined += static_cast<int64_t>(t.raw_data().size());
    return {};
  };
  auto& proto = onnx_adapter::MutableProto(*model);
  (void)onnx_adapter::ForEachTensor(*proto.mutable_graph(), count, /*include_sparse=*/true);
  for (auto& f : *proto.mutable_functions()) (void)onnx_adapter::ForEachNodeTensor(*f.mutable_node(), count, true);
  if (inlined > 2 * kDataBytes) fuzz::Fail("more bytes inlined than the files hold");
  return 0;
}
