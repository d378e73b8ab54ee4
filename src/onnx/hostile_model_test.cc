// Hostile models built byte by byte (docs/security.md): external data that
// leaves the model's folder through a symlink, sparse tensors pointing
// anywhere, regions claimed many times over, FIFOs and devices given as
// files, and nodes that crash ONNX's shape inference.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "onnx/model.h"
#include "onnx/model_internal.h"
#include "onnx/test_util.h"
#include "onnx/validate.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteRaw;

// y = Identity(x) over float[n], plus whatever the caller adds.
onnx::ModelProto BaseModel(int64_t n = 4) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(n);
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* node = g->add_node();
  node->set_name("id");
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  return m;
}

void External(onnx::TensorProto* t, const std::string& name, int64_t elements, const std::string& location,
              int64_t offset = 0) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(elements);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(elements * 4));
}

fs::path SaveProto(const onnx::ModelProto& m, const fs::path& path) {
  std::string bytes;
  m.SerializeToString(&bytes);
  WriteRaw(path, bytes);
  return path;
}

void ExpectRefused(const Result<Model>& r, const std::string& needle) {
  ASSERT_FALSE(r) << "loaded a hostile model";
  EXPECT_NE(r.error().code(), ErrorCode::kInternal);
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(HostileModel, ExternalDataThroughASymlinkOutOfTheFolderIsRefused) {
  TempDir dir;
  fs::create_directories(dir / "model");
  WriteRaw(dir / "secret.bin", std::string(16, 'S'));
  fs::create_symlink(dir / "secret.bin", dir / "model" / "weights.bin");
  auto m = BaseModel();
  External(m.mutable_graph()->add_initializer(), "w", 4, "weights.bin");
  ExpectRefused(Model::Load(SaveProto(m, dir / "model" / "m.onnx")), "outside the model's directory");
  // A symlinked folder on the way counts the same.
  fs::create_directories(dir / "elsewhere");
  WriteRaw(dir / "elsewhere" / "w.bin", std::string(16, 'S'));
  fs::create_directory_symlink(dir / "elsewhere", dir / "model" / "sub");
  auto m2 = BaseModel();
  External(m2.mutable_graph()->add_initializer(), "w", 4, "sub/w.bin");
  ExpectRefused(Model::Load(SaveProto(m2, dir / "model" / "m2.onnx")), "outside the model's directory");
}

TEST(HostileModel, ExternalDataSymlinkInsideTheFolderIsRead) {
  TempDir dir;
  WriteRaw(dir / "real.bin", std::string(16, '\0'));
  fs::create_symlink("real.bin", dir / "link.bin");
  auto m = BaseModel();
  External(m.mutable_graph()->add_initializer(), "w", 4, "link.bin");
  auto r = Model::Load(SaveProto(m, dir / "m.onnx"));
  ASSERT_TRUE(r) << r.error().message();
}

TEST(HostileModel, SparseInitializerLocationsAreCheckedAndInlined) {
  TempDir dir;
  fs::create_directories(dir / "model");
  WriteRaw(dir / "secret.bin", std::string(16, 'S'));
  auto m = BaseModel();
  auto* sparse = m.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(4);
  External(sparse->mutable_values(), "s", 4, "../secret.bin");
  auto* idx = sparse->mutable_indices();
  idx->set_name("s_idx");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(4);
  for (int i = 0; i < 4; ++i) idx->add_int64_data(i);
  ExpectRefused(Model::Load(SaveProto(m, dir / "model" / "m.onnx")), "leaves the model's directory");

  // A sparse attribute tensor with an absolute location.
  auto m2 = BaseModel();
  auto* c = m2.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->add_output("c");
  auto* a = c->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  a->mutable_sparse_tensor()->add_dims(4);
  External(a->mutable_sparse_tensor()->mutable_values(), "v", 4, (dir / "secret.bin").string());
  ExpectRefused(Model::Load(SaveProto(m2, dir / "model" / "m2.onnx")), "absolute");

  // Inside the folder, a sparse initializer's values are read into the model.
  WriteRaw(dir / "model" / "values.bin", std::string(16, '\0'));
  auto m3 = BaseModel();
  auto* s3 = m3.mutable_graph()->add_sparse_initializer();
  s3->add_dims(4);
  External(s3->mutable_values(), "s", 4, "values.bin");
  *s3->mutable_indices() = *idx;
  auto r = Model::Load(SaveProto(m3, dir / "model" / "m3.onnx"));
  ASSERT_TRUE(r) << r.error().message();
  const auto& values = onnx_adapter::Proto(*r).graph().sparse_initializer(0).values();
  EXPECT_NE(values.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(values.raw_data().size(), 16u);
}

TEST(HostileModel, ManyTensorsClaimingOneRegionAreRefusedBeforeReading) {
  TempDir dir;
  WriteRaw(dir / "w.bin", std::string(4096, '\0'));
  auto m = BaseModel();
  // 600 tensors naming the same 4 KiB: 2.4 MB of tensors from a 4 KiB file.
  for (int i = 0; i < 600; ++i)
    External(m.mutable_graph()->add_initializer(), "w" + std::to_string(i), 1024, "w.bin");
  ExpectRefused(Model::Load(SaveProto(m, dir / "m.onnx")), "claim more than its 4096 bytes");
  // Two tensors splitting the file between them are fine.
  auto ok = BaseModel();
  External(ok.mutable_graph()->add_initializer(), "a", 512, "w.bin", 0);
  External(ok.mutable_graph()->add_initializer(), "b", 512, "w.bin", 2048);
  auto r = Model::Load(SaveProto(ok, dir / "ok.onnx"));
  EXPECT_TRUE(r) << r.error().message();
}

TEST(HostileModel, FifoAndDeviceAsModelOrExternalDataAreRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.onnx").c_str(), 0600), 0);
  ExpectRefused(Model::Load(dir / "fifo.onnx"), "not a regular file");
  ASSERT_EQ(::mkfifo((dir / "w.bin").c_str(), 0600), 0);
  auto m = BaseModel();
  External(m.mutable_graph()->add_initializer(), "w", 4, "w.bin");
  ExpectRefused(Model::Load(SaveProto(m, dir / "m.onnx")), "not a regular file");
  fs::create_symlink("/dev/zero", dir / "zero.onnx");
  ExpectRefused(Model::Load(dir / "zero.onnx"), "not a regular file");
}

TEST(HostileModel, NodeWithTooManyOutputsIsRefusedAtLoad) {
  TempDir dir;
  auto m = BaseModel();
  auto* split = m.mutable_graph()->add_node();
  split->set_op_type("Split");
  split->add_input("x");
  for (int i = 0; i <= kMaxNodeOutputs; ++i) split->add_output("s" + std::to_string(i));
  ExpectRefused(Model::Load(SaveProto(m, dir / "m.onnx")), "outputs, more than the limit");
}

// Issue 29, probe 2: a 122-byte model whose STRING initializer declares 2e8
// elements and holds one made ORT allocate 6.3 GB (check exited 1, not 2).
TEST(HostileModel, TensorsDeclaringMoreThanTheyHoldAreRefusedAtLoad) {
  TempDir dir;
  {
    auto m = BaseModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("s");
    t->set_data_type(onnx::TensorProto::STRING);
    t->add_dims(200'000'000);
    t->add_string_data("x");
    const auto path = SaveProto(m, dir / "strings.onnx");
    EXPECT_LT(fs::file_size(path), 200u);
    auto r = Model::Load(path);
    ExpectRefused(r, "not a valid ONNX model (initializer 's': 1 strings for shape [200000000])");
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  }
  {  // raw_data too short, inside a Constant node of a subgraph
    auto m = BaseModel();
    auto* branch = m.mutable_graph()->add_node();
    branch->set_op_type("If");
    branch->set_name("if");
    auto* g = branch->add_attribute();
    g->set_name("then_branch");
    g->set_type(onnx::AttributeProto::GRAPH);
    auto* c = g->mutable_g()->add_node();
    c->set_op_type("Constant");
    c->set_name("c");
    auto* value = c->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    value->mutable_t()->add_dims(1'000'000);
    value->mutable_t()->set_raw_data(std::string(8, '\0'));
    ExpectRefused(Model::Load(SaveProto(m, dir / "raw.onnx")),
                  "node 'c' (Constant), attribute 'value': raw_data has 8 bytes, shape [1000000] of float32 needs "
                  "4000000");
  }
  {  // typed field with fewer entries than the dims
    auto m = BaseModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(3);
    t->add_float_data(1.0f);
    ExpectRefused(Model::Load(SaveProto(m, dir / "typed.onnx")), "initializer 'w': float_data has 1 elements");
  }
  {  // a STRING tensor carrying raw_data (found by fuzz/string_tensor_fuzz.cc)
    auto m = BaseModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("s");
    t->set_data_type(onnx::TensorProto::STRING);
    t->add_dims(1);
    t->add_string_data("a");
    t->set_raw_data("raw");
    ExpectRefused(Model::Load(SaveProto(m, dir / "string_raw.onnx")),
                  "initializer 's': a STRING tensor with raw_data (strings go in string_data)");
  }
  {  // an honest one loads
    auto m = BaseModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("s");
    t->set_data_type(onnx::TensorProto::STRING);
    t->add_dims(2);
    t->add_string_data("a");
    t->add_string_data("b");
    auto r = Model::Load(SaveProto(m, dir / "honest.onnx"));
    EXPECT_TRUE(r.has_value()) << r.error().message();
  }
}

// onnx/onnx#6180: a Conv whose weight is a scalar passes the checker and
// segfaults ONNX's shape inference. Check() must report it, not crash.
TEST(HostileModel, ConvWithScalarWeightIsReportedNotCrashedOn) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto input = [&](const std::string& name, std::vector<int64_t> dims) {
    auto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  input("in0", {7, 6, 1, 5});
  input("in1", {});
  input("in2", {7, 2, 3, 2, 1});
  auto* out = g->add_output();
  out->set_name("out0");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_name("conv");
  n->set_op_type("Conv");
  n->add_input("in0");
  n->add_input("in1");
  n->add_input("in2");
  n->add_output("out0");
  TempDir dir;
  auto model = Model::Load(SaveProto(m, dir / "conv.onnx"));
  ASSERT_TRUE(model) << model.error().message();
  const auto findings = Check(*model);
  bool named = false;
  for (const auto& f : findings) named = named || f.message.find("weight has rank 0") != std::string::npos;
  EXPECT_TRUE(named);
  auto inferred = WithInferredShapes(*model);
  ASSERT_FALSE(inferred);
  EXPECT_NE(inferred.error().message().find("weight has rank 0"), std::string::npos);
}

}  // namespace
}  // namespace parity
