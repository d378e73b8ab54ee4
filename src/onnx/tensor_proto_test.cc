#include "onnx/tensor_proto.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx/test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteRaw;

TEST(TensorProtoFile, RoundTripsEveryDType) {
  TempDir dir;
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                   DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32, DType::kUInt32, DType::kInt64,
                   DType::kUInt64, DType::kBool}) {
    Tensor t(dt, {2, 3});
    for (size_t i = 0; i < t.byte_size(); ++i)
      t.mutable_data()[i] = std::byte(dt == DType::kBool ? i % 2 : i * 7);
    const fs::path p = dir / fmt::format("{}.pb", DTypeName(dt));
    ASSERT_TRUE(WriteTensorProtoFile(p, "x", t));
    std::string name;
    auto back = ReadTensorProtoFile(p, &name);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(name, "x");
    EXPECT_TRUE(back->BitwiseEquals(t)) << DTypeName(dt);
  }
  Tensor s = Tensor::FromStrings({2}, {"a", "bc"});
  ASSERT_TRUE(WriteTensorProtoFile(dir / "s.pb", "s", s));
  auto back = ReadTensorProtoFile(dir / "s.pb");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->strings(), s.strings());
}

TEST(TensorProtoFile, ReadsTypedFields) {
  TempDir dir;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(FloatToHalf(1.5f));
  p.add_int32_data(FloatToHalf(-2.0f));
  WriteRaw(dir / "h.pb", p.SerializeAsString());
  auto t = ReadTensorProtoFile(dir / "h.pb");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->GetAsDouble(0), 1.5);
  EXPECT_EQ(t->GetAsDouble(1), -2.0);

  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT32);
  u.add_dims(1);
  u.add_uint64_data(4000000000u);
  WriteRaw(dir / "u.pb", u.SerializeAsString());
  auto tu = ReadTensorProtoFile(dir / "u.pb");
  ASSERT_TRUE(tu) << tu.error().message();
  EXPECT_EQ(tu->view<uint32_t>()[0], 4000000000u);
}

TEST(TensorProtoFile, RejectsBadFilesNamingThem) {
  TempDir dir;
  Tensor t(DType::kFloat32, {4, 4});
  std::memset(t.mutable_data(), 0, t.byte_size());
  ASSERT_TRUE(WriteTensorProtoFile(dir / "good.pb", "x", t));
  const std::string good = testing::ReadRaw(dir / "good.pb");

  WriteRaw(dir / "truncated.pb", good.substr(0, good.size() / 2));
  WriteRaw(dir / "empty.pb", "");
  std::string random(300, '\0');
  std::mt19937 rng(7);
  for (auto& c : random) c = static_cast<char>(rng());
  WriteRaw(dir / "random.pb", random);
  onnx::TensorProto neg;
  neg.set_data_type(onnx::TensorProto::FLOAT);
  neg.add_dims(-3);
  WriteRaw(dir / "negative.pb", neg.SerializeAsString());
  onnx::TensorProto huge;
  huge.set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 4; ++i) huge.add_dims(int64_t{1} << 20);
  huge.set_raw_data("abcd");
  WriteRaw(dir / "huge.pb", huge.SerializeAsString());
  onnx::TensorProto mismatch;
  mismatch.set_data_type(onnx::TensorProto::FLOAT);
  mismatch.add_dims(3);
  mismatch.set_raw_data("abcd");
  WriteRaw(dir / "mismatch.pb", mismatch.SerializeAsString());

  for (const char* name :
       {"truncated.pb", "empty.pb", "random.pb", "negative.pb", "huge.pb", "mismatch.pb"}) {
    auto r = ReadTensorProtoFile(dir / name);
    ASSERT_FALSE(r) << name;
    EXPECT_NE(r.error().message().find(name), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().code(), ErrorCode::kInternal);
  }
  EXPECT_EQ(ReadTensorProtoFile(dir / "missing.pb").error().code(), ErrorCode::kNotFound);
}

TEST(TensorProtoFile, ComplexIsUnsupported) {
  TempDir dir;
  onnx::TensorProto c;
  c.set_data_type(onnx::TensorProto::COMPLEX64);
  c.add_dims(1);
  c.add_float_data(1);
  c.add_float_data(2);
  WriteRaw(dir / "c.pb", c.SerializeAsString());
  auto r = ReadTensorProtoFile(dir / "c.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("COMPLEX64"), std::string::npos) << r.error().message();
}

// Every .pb of ONNX's node test data either reads or fails cleanly: complex
// and float8 give kUnsupported, sequences/optionals (not TensorProtos) give
// an error, nothing crashes.
TEST(TensorProtoFile, ReadsOnnxNodeTestData) {
  if (!fs::exists(testing::kOnnxNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  int ok = 0, unsupported = 0, other = 0;
  for (const auto& c : fs::directory_iterator(testing::kOnnxNodeData)) {
    const fs::path set = c.path() / "test_data_set_0";
    if (!fs::is_directory(set)) continue;
    for (const auto& f : fs::directory_iterator(set)) {
      auto r = ReadTensorProtoFile(f.path());
      if (r) {
        ++ok;
      } else {
        ASSERT_NE(r.error().code(), ErrorCode::kInternal) << r.error().message();
        EXPECT_NE(r.error().message().find(f.path().filename().string()), std::string::npos);
        if (r.error().code() == ErrorCode::kUnsupported) {
          ++unsupported;
        } else {
          ++other;  // e.g. a SequenceProto/OptionalProto file that is not a TensorProto
          std::printf("  %s\n", r.error().message().c_str());
        }
      }
    }
  }
  RecordProperty("parsed", ok);
  std::printf("ONNX node test data: %d parsed, %d unsupported, %d other errors\n", ok, unsupported, other);
  // libonnx-testdata of ONNX 1.23 holds 2836 files parity parses (45 more of unsupported
  // dtypes, 6 that are not TensorProtos); the floor leaves room for another test-data
  // release, not for a reader that rejects a common dtype.
  EXPECT_GT(ok, 1500);
}

TEST(TestDataSet, NamesTensorsFromProtoOrModelOrder) {
  if (!fs::exists(testing::kOnnxNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto set = ReadTestDataSet(testing::kOnnxNodeData / "test_add" / "test_data_set_0", {"x", "y"}, {"sum"});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->inputs.size(), 2u);
  EXPECT_EQ(set->outputs.size(), 1u);
  EXPECT_TRUE(set->inputs.Contains("x"));
  EXPECT_TRUE(set->inputs.Contains("y"));

  TempDir dir;
  Tensor t(DType::kInt64, {1});
  t.mutable_view<int64_t>()[0] = 5;
  ASSERT_TRUE(WriteTensorProtoFile(dir / "input_0.pb", "", t));
  auto named = ReadTestDataSet(dir.path(), {"a"}, {});
  ASSERT_TRUE(named);
  EXPECT_TRUE(named->inputs.Contains("a"));
  auto unnamed = ReadTestDataSet(dir.path(), {}, {});
  ASSERT_FALSE(unnamed);
  EXPECT_NE(unnamed.error().message().find("input_0.pb"), std::string::npos);
}

}  // namespace
}  // namespace parity
