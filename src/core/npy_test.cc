#include "core/npy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "core/io_test_util.h"

namespace parity {
namespace {

using testing::TempDir;

// An .npy image with a hand-written header dict.
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const size_t len = dict.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return out + dict + data;
}

std::string Dict(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

Result<Tensor> ParseString(const std::string& s) {
  return ParseNpy(std::as_bytes(std::span<const char>(s.data(), s.size())));
}

// Writes `bytes` to a file and reads it, so that the error carries the path.
struct FileRead {
  TempDir dir;
  std::filesystem::path path;
  Result<Tensor> result = Tensor();
  explicit FileRead(const std::string& bytes) : path(dir / "t.npy") {
    testing::WriteFileString(path, bytes);
    result = ReadNpy(path);
  }
  // The error must be one line that starts with the file name.
  void ExpectError(ErrorCode code, const std::string& fragment) const {
    ASSERT_FALSE(result.has_value());
    const std::string& msg = result.error().message();
    EXPECT_EQ(result.error().code(), code) << msg;
    EXPECT_TRUE(msg.starts_with(path.string() + ": ")) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
};

TEST(NpyReader, ReadsVersion1HeaderWithoutPadding) {
  auto t = ParseString(MakeNpy(Dict("<i2", "(2,)"), std::string("\x01\x00\xff\xff", 4)));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->dtype(), DType::kInt16);
  EXPECT_EQ(t->view<int16_t>()[0], 1);
  EXPECT_EQ(t->view<int16_t>()[1], -1);
}

TEST(NpyReader, ReadsVersion2And3With4ByteHeaderLength) {
  for (int major : {2, 3}) {
    auto t = ParseString(MakeNpy(Dict("|u1", "(3,)"), "abc", major));
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(t->shape(), Shape{3});
  }
}

TEST(NpyReader, ByteSwapsBigEndianData) {
  auto t = ParseString(MakeNpy(Dict(">u4", "(1,)"), std::string("\x01\x02\x03\x04", 4)));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->view<uint32_t>()[0], 0x01020304u);
}

TEST(NpyReader, AcceptsPython2LongsDoubleQuotesAndKeyOrder) {
  auto t = ParseString(MakeNpy("{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<f4\"}   \n",
                               std::string(8, '\0')));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->shape(), (Shape{2, 1}));
}

TEST(NpyReader, ReadsBfloat16FromVoid2) {
  for (const char* descr : {"|V2", "<V2"}) {
    auto t = ParseString(MakeNpy(Dict(descr, "()"), std::string("\x80\x3f", 2)));
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(t->dtype(), DType::kBFloat16);
    EXPECT_EQ(t->GetAsDouble(0), 1.0);
  }
}

TEST(NpyReader, RejectsEmptyFile) { FileRead("").ExpectError(ErrorCode::kCorrupt, "empty file"); }

TEST(NpyReader, RejectsRandomBytes) {
  std::mt19937 rng(42);
  std::string junk(1000, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  FileRead(junk).ExpectError(ErrorCode::kCorrupt, "not a .npy file");
}

TEST(NpyReader, RejectsTruncatedHeader) {
  const std::string full = MakeNpy(Dict("<f4", "(2,)"), std::string(8, '\0'));
  FileRead(full.substr(0, 9)).ExpectError(ErrorCode::kCorrupt, "too short");
  FileRead(full.substr(0, 30)).ExpectError(ErrorCode::kCorrupt, "truncated header");
}

TEST(NpyReader, RejectsTruncatedData) {
  FileRead(MakeNpy(Dict("<f4", "(3, 4)"), std::string(47, '\0')))
      .ExpectError(ErrorCode::kCorrupt, "declares 48 bytes of data (float32 [3, 4]) but the file has 47");
}

TEST(NpyReader, RejectsTrailingBytes) {
  FileRead(MakeNpy(Dict("<f4", "(2,)"), std::string(9, '\0')))
      .ExpectError(ErrorCode::kCorrupt, "1 trailing bytes");
}

TEST(NpyReader, RejectsHugeDeclaredShapeBeforeAllocating) {
  // 10^12 float32 elements (4 TB) declared by a ~100-byte file.
  const auto start = std::chrono::steady_clock::now();
  FileRead read(MakeNpy(Dict("<f4", "(1000000000000,)"), std::string(28, '\0')));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  read.ExpectError(ErrorCode::kCorrupt, "declares 4000000000000 bytes of data");
  EXPECT_LT(elapsed, std::chrono::seconds(1));  // generous: it must not touch 4 TB
}

TEST(NpyReader, RejectsShapeWhoseElementCountOverflows) {
  FileRead(MakeNpy(Dict("<f8", "(4294967296, 4294967296, 4294967296)"), ""))
      .ExpectError(ErrorCode::kCorrupt, "more than");
  FileRead(MakeNpy(Dict("<f8", "(99999999999999999999,)"), ""))
      .ExpectError(ErrorCode::kCorrupt, "out of range");
}

TEST(NpyReader, RejectsNegativeDimension) {
  FileRead(MakeNpy(Dict("<f4", "(2, -3)"), "")).ExpectError(ErrorCode::kCorrupt, "negative dimension -3");
}

TEST(NpyReader, ReadsFortranOrderAsTheSameValuesInCOrder) {
  // A (2, 3) array [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5.
  const std::vector<float> column_major = {0, 3, 1, 4, 2, 5};
  std::string data(reinterpret_cast<const char*>(column_major.data()), column_major.size() * sizeof(float));
  TempDir dir;
  const auto path = dir / "f.npy";
  testing::WriteFileString(path, MakeNpy(Dict("<f4", "(2, 3)", "True"), data));
  auto t = ReadNpy(path);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  const auto v = t->view<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(NpyReader, FortranOrderStillChecksTheDataSize) {
  FileRead(MakeNpy(Dict("<f4", "(2, 2)", "True"), std::string(12, '\0')))
      .ExpectError(ErrorCode::kCorrupt, "header declares 16 bytes");
}

TEST(NpyReader, RejectsObjectStringComplexAndStructuredDtypes) {
  FileRead(MakeNpy(Dict("|O", "(1,)"), std::string(8, '\0')))
      .ExpectError(ErrorCode::kUnsupported, "object arrays");
  FileRead(MakeNpy(Dict("<U3", "(1,)"), std::string(12, '\0')))
      .ExpectError(ErrorCode::kUnsupported, "string");
  FileRead(MakeNpy(Dict("|S3", "(1,)"), std::string(3, '\0'))).ExpectError(ErrorCode::kUnsupported, "string");
  FileRead(MakeNpy(Dict("<c8", "(1,)"), std::string(8, '\0')))
      .ExpectError(ErrorCode::kUnsupported, "complex");
  FileRead(MakeNpy(Dict("|V4", "(1,)"), std::string(4, '\0'))).ExpectError(ErrorCode::kUnsupported, "void");
  FileRead(MakeNpy("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }\n",
                   std::string(8, '\0')))
      .ExpectError(ErrorCode::kUnsupported, "structured");
}

TEST(NpyReader, RejectsMalformedHeaderDicts) {
  const std::string data(4, '\0');
  struct BadDict {
    std::string dict;
    std::string fragment;
  };
  const BadDict cases[] = {
      {"{'descr': '<f4', 'shape': (1,)}", "lacks"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "expected ',' or '}'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "malformed"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "not a bool"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('1',)}", "not an integer"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "duplicate key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", "unexpected text"},
      {"('descr', '<f4')", "not a dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(((((((((((((((((((1,),),),),),),),),),),),),),),),),),)}",
       "nested too deeply"},
      {"'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "malformed header dict at byte 7"},
      {"{'descr': '<q9', 'fortran_order': False, 'shape': (1,)}", "not supported"},
  };
  for (const BadDict& c : cases) {
    SCOPED_TRACE(c.dict);
    FileRead read(MakeNpy(c.dict, data));
    ASSERT_FALSE(read.result.has_value());
    EXPECT_NE(read.result.error().message().find(c.fragment), std::string::npos)
        << read.result.error().message();
  }
}

TEST(NpyReader, RejectsNumpysObjectStructuredAndUnicodeArrays) {
  PARITY_REQUIRE_NUMPY();
  TempDir dir;
  auto run = testing::RunPython(dir, R"py(
import sys, numpy as np
d = sys.argv[1]
np.save(d + '/object.npy', np.array([1, 'a', None], dtype=object), allow_pickle=True)
np.save(d + '/structured.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i8')]))
np.save(d + '/unicode.npy', np.array(['ab', 'c']))
np.save(d + '/complex.npy', np.zeros(2, dtype='<c16'))
)py",
                                dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::pair<const char*, const char*> cases[] = {{"object", "object arrays"},
                                                       {"structured", "structured"},
                                                       {"unicode", "string arrays (descr '<U2')"},
                                                       {"complex", "complex"}};
  for (const auto& [name, fragment] : cases) {
    SCOPED_TRACE(name);
    auto t = ReadNpy(dir / (std::string(name) + ".npy"));
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(t.error().message().find(fragment), std::string::npos) << t.error().message();
  }
}

TEST(NpyReader, RejectsUnknownVersionAndHugeHeaderLength) {
  FileRead(MakeNpy(Dict("<f4", "(1,)"), std::string(4, '\0'), 4))
      .ExpectError(ErrorCode::kUnsupported, "version 4.0");
  std::string huge = std::string("\x93NUMPY\x02\x00", 8) + std::string("\x00\x00\x00\x40", 4) + "{}";
  FileRead(huge).ExpectError(ErrorCode::kCorrupt, "exceeds the limit");
}

TEST(NpyReader, ReportsMissingFileAsNotFound) {
  TempDir dir;
  auto t = ReadNpy(dir / "nope.npy");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(t.error().message().starts_with((dir / "nope.npy").string() + ": "));
  auto d = ReadNpy(dir.path());
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message().find("not a regular file"), std::string::npos);
}

TEST(NpyWriter, WritesAlignedVersion1HeaderNumpyStyle) {
  auto image = SerializeNpy(Tensor::FromVector(DType::kFloat32, {2, 3}, std::vector<float>(6, 1.0f)));
  ASSERT_TRUE(image.has_value());
  const std::string s(reinterpret_cast<const char*>(image->data()), image->size());
  EXPECT_EQ(s.size(), 128u + 24u);  // data starts at a 64-byte boundary, as numpy's
  EXPECT_EQ(s.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(s.substr(10).find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), 0u);
  EXPECT_EQ(s[127], '\n');
}

TEST(NpyWriter, UsesVersion2WhenTheHeaderDoesNotFit64K) {
  auto header = EncodeNpyHeader(DType::kUInt8, Shape(30000, 1));
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ((*header)[6], '\x02');
  EXPECT_EQ(header->size() % 64, 0u);
  auto t = ParseString(*header + "\x07");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->rank(), 30000);
}

TEST(NpyWriter, RefusesStringTensorsNamingTheFile) {
  TempDir dir;
  auto s = WriteNpy(dir / "s.npy", Tensor::FromStrings({1}, {"x"}));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(s.error().message().starts_with((dir / "s.npy").string() + ": "));
  EXPECT_TRUE(testing::ListDir(dir.path()).empty());
}

TEST(NpyWriter, LeavesNoTempFileAndRoundTrips) {
  TempDir dir;
  const Tensor t = Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{-1, 1});
  ASSERT_TRUE(WriteNpy(dir / "a.npy", t).has_value());
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"a.npy"});
  auto back = ReadNpy(dir / "a.npy");
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->BitwiseEquals(t));
}

TEST(NpyWriter, FailsWithPathWhenTheDirectoryIsMissing) {
  TempDir dir;
  auto s = WriteNpy(dir / "no" / "a.npy", Tensor(DType::kFloat32, {1}));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(s.error().message().starts_with((dir / "no" / "a.npy").string() + ": ")) << s.error().message();
}

}  // namespace
}  // namespace parity
