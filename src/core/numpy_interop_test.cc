// Round trips with real numpy in both directions, bit for bit, for every
// DType: numpy writes .npy (v1, v2, v3, big-endian) and .npz (np.savez,
// np.savez_compressed) that parity reads; parity writes files that numpy
// loads and checks (dtype, shape, sha256 of arr.tobytes()).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/io_test_util.h"
#include "core/npy.h"
#include "core/npz.h"
#include "core/sha256.h"
#include "core/tensor_files.h"

namespace parity {
namespace {

using testing::RunPython;
using testing::TempDir;

// Base arrays, all little-endian, with the awkward values: NaN payloads
// (quiet and signalling), -0.0, +-inf, the smallest and largest denormals,
// the largest finite value; integer extremes; 0-d and empty shapes.
constexpr const char* kNumpyWriter = R"py(
import sys, os, numpy as np
d = sys.argv[1]
def bits(pattern_dtype, view_dtype, patterns, shape):
    return np.array(patterns, dtype=pattern_dtype).view(view_dtype).reshape(shape)
base = {
  'float32': bits('<u4', '<f4', [0x7fc00001, 0x7f800001, 0xffc12345, 0x80000000, 0x7f800000, 0xff800000,
                                 0x00000001, 0x007fffff, 0x3f800000, 0x00000000, 0x7f7fffff, 0xbf800000], (3, 4)),
  'float64': bits('<u8', '<f8', [0x7ff8000000000001, 0x7ff0000000000001, 0x8000000000000000, 0x7ff0000000000000,
                                 0xfff0000000000000, 0x0000000000000001, 0x000fffffffffffff, 0x3ff0000000000000], (2, 2, 2)),
  'float16': bits('<u2', '<f2', [0x7e01, 0x7c01, 0xfe00, 0x8000, 0x7c00, 0xfc00, 0x0001, 0x03ff, 0x3c00, 0x7bff], (10,)),
  'bfloat16': bits('<u2', 'V2', [0x7fc1, 0x7f81, 0x8000, 0x7f80, 0xff80, 0x0001, 0x007f, 0x3f80, 0x7f7f], (3, 3)),
  'int8': np.array([-128, 127, 0, -1, 5, 6], dtype='i1').reshape(2, 3),
  'uint8': np.array([0, 255, 1, 128], dtype='u1'),
  'int16': np.array([-32768, 32767, 0, -1], dtype='<i2').reshape(4, 1),
  'uint16': np.array([0, 65535, 256, 1], dtype='<u2'),
  'int32': np.array([-2**31, 2**31 - 1, 0, -1, 123456789, 7], dtype='<i4').reshape(1, 2, 3),
  'uint32': np.array([0, 2**32 - 1, 65536, 1], dtype='<u4'),
  'int64': np.array([-2**63, 2**63 - 1, 0, -1], dtype='<i8'),
  'uint64': np.array([0, 2**64 - 1, 2**32, 1], dtype='<u8'),
  'bool': np.array([[True, False, True], [False, False, True]]),
}
extra = {
  'scalar_f32': (np.array(-0.0, dtype='<f4'), 'float32'),
  'scalar_i64': (np.array(-7, dtype='<i8'), 'int64'),
  'empty_f32': (np.zeros((0, 3), dtype='<f4'), 'float32'),
  'empty_middle_u8': (np.zeros((5, 0, 2), dtype='u1'), 'uint8'),
}
cases = []
def emit(name, arr, parity_dtype, raw):
    with open(os.path.join(d, name + '.raw'), 'wb') as f:
        f.write(raw)
    cases.append('%s %s %s' % (name, parity_dtype, ','.join(str(s) for s in arr.shape) or '-'))
for key, arr in list(base.items()) + [(k, v[0]) for k, v in extra.items()]:
    parity_dtype = base.get(key) is not None and key or extra[key][1]
    raw = arr.tobytes()
    for major in (1, 2, 3):
        name = '%s_v%d' % (key, major)
        with open(os.path.join(d, name + '.npy'), 'wb') as f:
            np.lib.format.write_array(f, arr, version=(major, 0))
        emit(name, arr, parity_dtype, raw)
    np.save(os.path.join(d, key + '_save.npy'), arr)
    emit(key + '_save', arr, parity_dtype, raw)
    if arr.dtype.itemsize > 1 and arr.dtype.kind != 'V':
        np.save(os.path.join(d, key + '_be.npy'), arr.astype(arr.dtype.newbyteorder('>')))
        emit(key + '_be', arr, parity_dtype, raw)
    if arr.ndim >= 2 and arr.size > 1:
        # numpy writes fortran_order True for a column-major array (a transpose):
        # parity must read the same values at the same indices (raw is C order).
        np.save(os.path.join(d, key + '_fortran.npy'), np.asfortranarray(arr))
        emit(key + '_fortran', arr, parity_dtype, raw)
        if arr.dtype.itemsize > 1 and arr.dtype.kind != 'V':
            np.save(os.path.join(d, key + '_fortran_be.npy'),
                    np.asfortranarray(arr.astype(arr.dtype.newbyteorder('>'))))
            emit(key + '_fortran_be', arr, parity_dtype, raw)
        t = arr.T  # a transposed view: Fortran-contiguous
        np.save(os.path.join(d, key + '_transposed.npy'), t)
        emit(key + '_transposed', t, parity_dtype, np.ascontiguousarray(t).tobytes())
with open(os.path.join(d, 'cases.txt'), 'w') as f:
    f.write('\n'.join(cases) + '\n')
arrays = dict(base)
arrays['typical/images'] = base['float32']
arrays['scalar_f32'] = extra['scalar_f32'][0]
arrays['empty_f32'] = extra['empty_f32'][0]
arrays['fortran/int32'] = np.asfortranarray(base['int32'])
np.savez(os.path.join(d, 'stored.npz'), **arrays)
np.savez_compressed(os.path.join(d, 'deflated.npz'), **arrays)
)py";

struct Case {
  std::string name;
  std::string dtype;
  Shape shape;
};

std::vector<Case> ParseCases(const std::string& text) {
  std::vector<Case> cases;
  std::istringstream in(text);
  std::string name, dtype, shape;
  while (in >> name >> dtype >> shape) {
    Case c{name, dtype, {}};
    if (shape != "-") {
      std::istringstream dims(shape);
      for (std::string dim; std::getline(dims, dim, ',');) c.shape.push_back(std::stoll(dim));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string TensorBytes(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), t.byte_size());
}

TEST(NumpyInterop, ParityReadsEveryDtypeNumpyWritesBitExactly) {
  PARITY_REQUIRE_NUMPY();
  TempDir dir;
  auto run = RunPython(dir, kNumpyWriter, dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto cases = ParseCases(testing::ReadFileString(dir / "cases.txt"));
  // kNumpyWriter writes each of its 17 arrays (13 in `base`, 4 in `extra`) at
  // least 4 ways (format versions 1, 2, 3 and np.save), more for some.
  ASSERT_GE(cases.size(), 17u * 4);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto t = ReadNpy(dir / (c.name + ".npy"));
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(DTypeName(t->dtype()), c.dtype);
    EXPECT_EQ(t->shape(), c.shape);
    EXPECT_EQ(TensorBytes(*t), testing::ReadFileString(dir / (c.name + ".raw")));
  }
}

TEST(NumpyInterop, ParityReadsNumpySavezStoredAndCompressed) {
  PARITY_REQUIRE_NUMPY();
  TempDir dir;
  auto run = RunPython(dir, kNumpyWriter, dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* archive : {"stored.npz", "deflated.npz"}) {
    SCOPED_TRACE(archive);
    auto set = ReadNpz(dir / archive);
    ASSERT_TRUE(set.has_value()) << set.error().message();
    ASSERT_EQ(set->size(), 13u + 4);  // kNumpyWriter's `arrays`: the 13 of `base` and 4 added
    EXPECT_EQ((*set)[0].name, "float32");  // archive order is kept
    for (const NamedTensor& nt : *set) {
      SCOPED_TRACE(nt.name);
      std::string base = nt.name == "typical/images" ? "float32" : nt.name == "fortran/int32" ? "int32" : nt.name;
      EXPECT_EQ(TensorBytes(nt.tensor), testing::ReadFileString(dir / (base + "_v1.raw")));
      auto from_npy = ReadNpy(dir / (base + "_v1.npy"));
      ASSERT_TRUE(from_npy.has_value());
      EXPECT_TRUE(nt.tensor.BitwiseEquals(*from_npy));
    }
  }
}

// Tensors parity writes, with the same awkward values, built in C++.
TensorSet ParityTensors() {
  TensorSet s;
  auto add = [&s]<typename T>(std::string name, DType dtype, Shape shape, std::vector<T> v) {
    s.Set(std::move(name), Tensor::FromVector(dtype, std::move(shape), v));
  };
  add("float32", DType::kFloat32, {2, 3},
      std::vector<uint32_t>{0x7fc00001, 0x7f800001, 0x80000000, 0xff800000, 0x00000001, 0x007fffff});
  add("float64", DType::kFloat64, {4},
      std::vector<uint64_t>{0x7ff8000000000001, 0x8000000000000000, 0x0000000000000001, 0x7ff0000000000000});
  add("float16", DType::kFloat16, {2, 2}, std::vector<uint16_t>{0x7e01, 0x8000, 0x0001, 0xfc00});
  add("bfloat16", DType::kBFloat16, {3}, std::vector<uint16_t>{0x7fc1, 0x8000, 0x0001});
  add("int8", DType::kInt8, {3}, std::vector<int8_t>{-128, 127, -1});
  add("uint8", DType::kUInt8, {2}, std::vector<uint8_t>{0, 255});
  add("int16", DType::kInt16, {2}, std::vector<int16_t>{-32768, 32767});
  add("uint16", DType::kUInt16, {2}, std::vector<uint16_t>{0, 65535});
  add("int32", DType::kInt32, {1, 2}, std::vector<int32_t>{INT32_MIN, INT32_MAX});
  add("uint32", DType::kUInt32, {2}, std::vector<uint32_t>{0, UINT32_MAX});
  add("int64", DType::kInt64, {2}, std::vector<int64_t>{INT64_MIN, INT64_MAX});
  add("uint64", DType::kUInt64, {2}, std::vector<uint64_t>{0, UINT64_MAX});
  add("bool", DType::kBool, {2, 2}, std::vector<uint8_t>{1, 0, 0, 1});
  add("scalar", DType::kFloat32, {}, std::vector<float>{-0.0f});
  s.Set("empty", Tensor(DType::kInt64, {3, 0}));  // (FromVector memcpys from a null pointer when empty)
  add("typical/images", DType::kFloat32, {1, 1}, std::vector<float>{INFINITY});
  return s;
}

constexpr const char* kNumpyChecker = R"py(
import sys, hashlib, zipfile, numpy as np
d, expected = sys.argv[1], sys.argv[2]
bad = 0
def check(where, arr, descr, shape, sha):
    global bad
    got = (arr.dtype.str, ','.join(str(s) for s in arr.shape) or '-', hashlib.sha256(arr.tobytes()).hexdigest())
    if got != (descr, shape, sha):
        print('MISMATCH', where, got, (descr, shape, sha)); bad += 1
rows = [l.split() for l in open(expected)]
for name, descr, shape, sha in rows:
    if '/' not in name:
        check(name + '.npy', np.load('%s/%s.npy' % (d, name), allow_pickle=False), descr, shape, sha)
for archive, method in (('stored.npz', zipfile.ZIP_STORED), ('deflated.npz', zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile('%s/%s' % (d, archive)) as z:
        for info in z.infolist():
            if info.compress_type != method or info.date_time != (1980, 1, 1, 0, 0, 0):
                print('ZIPINFO', archive, info.filename, info.compress_type, info.date_time); bad += 1
    with np.load('%s/%s' % (d, archive), allow_pickle=False) as z:
        if list(z.keys()) != [r[0] for r in rows]:
            print('KEYS', archive, list(z.keys())); bad += 1
        for name, descr, shape, sha in rows:
            check(archive + ':' + name, z[name], descr, shape, sha)
with np.load('%s/empty.npz' % d) as z:
    if list(z.keys()):
        print('EMPTY', list(z.keys())); bad += 1
print('checked', len(rows), 'tensors,', bad, 'problems')
sys.exit(1 if bad else 0)
)py";

TEST(NumpyInterop, NumpyLoadsWhatParityWritesBitExactly) {
  PARITY_REQUIRE_NUMPY();
  TempDir dir;
  const TensorSet tensors = ParityTensors();
  std::string expected;
  TensorSet bare;
  for (const NamedTensor& nt : tensors) {
    if (nt.name.find('/') == std::string::npos) bare.Set(nt.name, nt.tensor);
    const Shape& shape = nt.tensor.shape();
    expected += fmt::format("{} {} {} {}\n", nt.name, *NpyDescr(nt.tensor.dtype()),
                            shape.empty() ? "-" : fmt::format("{}", fmt::join(shape, ",")),
                            Sha256Hex(nt.tensor.bytes()));
  }
  testing::WriteFileString(dir / "expected.txt", expected);
  ASSERT_TRUE(WriteNpyDir(dir.path(), bare).has_value());
  ASSERT_TRUE(WriteNpz(dir / "stored.npz", tensors, {.compression = NpzCompression::kStore}).has_value());
  ASSERT_TRUE(WriteNpz(dir / "deflated.npz", tensors).has_value());
  ASSERT_TRUE(WriteNpz(dir / "empty.npz", TensorSet()).has_value());
  auto run = RunPython(dir, kNumpyChecker, dir.path().string() + " " + (dir / "expected.txt").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("0 problems"), std::string::npos) << run.output;
}

TEST(NumpyInterop, ParityReadsBackWhatItWrites) {
  TempDir dir;
  const TensorSet tensors = ParityTensors();
  for (auto compression : {NpzCompression::kStore, NpzCompression::kDeflate}) {
    ASSERT_TRUE(WriteNpz(dir / "a.npz", tensors, {.compression = compression}).has_value());
    auto back = ReadNpz(dir / "a.npz");
    ASSERT_TRUE(back.has_value()) << back.error().message();
    ASSERT_EQ(back->Names(), tensors.Names());
    for (size_t i = 0; i < tensors.size(); ++i)
      EXPECT_TRUE((*back)[i].tensor.BitwiseEquals(tensors[i].tensor));
  }
  ASSERT_TRUE(WriteNpz(dir / "empty.npz", TensorSet()).has_value());
  auto none = ReadNpz(dir / "empty.npz");
  ASSERT_TRUE(none.has_value()) << none.error().message();
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace parity
