#include "core/npz.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>

#include "core/io_test_util.h"
#include "core/npy.h"

namespace parity {
namespace {

using testing::RunPython;
using testing::TempDir;

void ExpectError(const Result<TensorSet>& r, const std::filesystem::path& path, ErrorCode code,
                 const std::string& fragment) {
  ASSERT_FALSE(r.has_value());
  const std::string& msg = r.error().message();
  EXPECT_EQ(r.error().code(), code) << msg;
  EXPECT_TRUE(msg.starts_with(path.string() + ": ")) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
}

// bomb.npz: a valid npy of 200 MB of zeros, deflated to ~200 KB (ratio ~1000:1).
// liar.npz: an entry whose header says 1,128 bytes while the deflate stream
// holds a megabyte more; the npy inside agrees with the lie.
constexpr const char* kBadArchives = R"py(
import sys, struct, zipfile, numpy as np
d = sys.argv[1]
def npy_header(n):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {'descr': '|u1', 'fortran_order': False, 'shape': (n,)})
    return buf.getvalue()
n = 200 * 1000 * 1000
with zipfile.ZipFile(d + '/bomb.npz', 'w', zipfile.ZIP_DEFLATED) as z:
    with z.open('x.npy', 'w', force_zip64=True) as f:
        f.write(npy_header(n))
        chunk = bytes(1 << 20)
        left = n
        while left:
            f.write(chunk[:min(left, len(chunk))]); left -= min(left, len(chunk))
h = npy_header(1000)
declared = len(h) + 1000
with zipfile.ZipFile(d + '/liar.npz', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('x.npy', h + bytes(1000) + bytes(1 << 20))
b = bytearray(open(d + '/liar.npz', 'rb').read())
assert b[:4] == b'PK\x03\x04'
struct.pack_into('<I', b, 22, declared)
c = b.rfind(b'PK\x01\x02')
struct.pack_into('<I', b, c + 24, declared)
open(d + '/liar.npz', 'wb').write(b)
with zipfile.ZipFile(d + '/extra.npz', 'w') as z:
    z.writestr('a.npy', h + bytes(1000))
    z.writestr('sub/', b'')
    z.writestr('README.txt', b'hello')
with zipfile.ZipFile(d + '/badentry.npz', 'w') as z:
    z.writestr('good.npy', h + bytes(1000))
    z.writestr('bad.npy', h + bytes(999))
open(d + '/random.npz', 'wb').write(bytes(range(256)) * 4)
# shared.npz: one deflated 10 MB entry, then 200 central-directory entries that
# all point at its local header (names of the same length as the local one).
hz = npy_header(10 * 1000 * 1000)
with zipfile.ZipFile(d + '/one.npz', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('a000.npy', hz + bytes(10 * 1000 * 1000))
b = open(d + '/one.npz', 'rb').read()
c = b.rfind(b'PK\x01\x02')
e = b.rfind(b'PK\x05\x06')
cd = b[c:e]
records = b''.join(cd.replace(b'a000.npy', ('a%03d.npy' % i).encode()) for i in range(200))
eocd = bytearray(b[e:e + 22])
struct.pack_into('<HHII', eocd, 8, 200, 200, len(records), c)
open(d + '/shared.npz', 'wb').write(b[:c] + records + bytes(eocd))
# many.npz: five honest 10 MB entries (50 MB in all, ~50 KB on disk).
with zipfile.ZipFile(d + '/many.npz', 'w', zipfile.ZIP_DEFLATED) as z:
    for i in range(5):
        z.writestr('t%d.npy' % i, hz + bytes(10 * 1000 * 1000))
)py";

class NpzReaderBadInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveNumpy()) return;
    dir_ = new TempDir;
    auto run = RunPython(*dir_, kBadArchives, dir_->path().string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { PARITY_REQUIRE_NUMPY(); }
  static TempDir* dir_;
};
TempDir* NpzReaderBadInput::dir_ = nullptr;

TEST_F(NpzReaderBadInput, RefusesHighRatioEntryAboveTheCheckSizeBeforeInflating) {
  const auto path = *dir_ / "bomb.npz";
  const auto start = std::chrono::steady_clock::now();
  ExpectError(ReadNpz(path, {.ratio_check_above_bytes = 100 << 20}), path, ErrorCode::kCorrupt, "zip bomb");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(NpzReaderBadInput, ReadsTheSameLargeEntryWithDefaultLimits) {
  auto set = ReadNpz(*dir_ / "bomb.npz");
  ASSERT_TRUE(set.has_value()) << set.error().message();
  ASSERT_EQ(set->size(), 1u);
  EXPECT_EQ((*set)[0].tensor.shape(), Shape{200000000});
}

TEST_F(NpzReaderBadInput, RefusesEntryAboveTheSizeLimit) {
  const auto path = *dir_ / "bomb.npz";
  ExpectError(ReadNpz(path, {.max_entry_bytes = 100 << 20}), path, ErrorCode::kUnsupported,
              "entry 'x.npy': declares 200000128 uncompressed bytes, above the limit of 104857600");
}

TEST_F(NpzReaderBadInput, RefusesDirectoryEntriesThatShareOneStreamBeforeInflating) {
  const auto path = *dir_ / "shared.npz";
  const auto start = std::chrono::steady_clock::now();
  ExpectError(ReadNpz(path), path, ErrorCode::kCorrupt, "its 200 entries declare");
  ExpectError(ReadNpz(path), path, ErrorCode::kCorrupt, "entries share data");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // The archive it was made from, with its one entry, reads.
  auto one = ReadNpz(*dir_ / "one.npz");
  ASSERT_TRUE(one.has_value()) << one.error().message();
  EXPECT_EQ((*one)[0].tensor.shape(), Shape{10000000});
}

TEST_F(NpzReaderBadInput, RefusesEntriesThatTogetherExceedTheBudgetNamingTheSizes) {
  const auto path = *dir_ / "many.npz";
  ExpectError(ReadNpz(path, {.max_total_bytes = 30'000'000}), path, ErrorCode::kUnsupported,
              "its 5 entries declare 50000640 uncompressed bytes in all, above the budget of 30000000 bytes");
  auto all = ReadNpz(path, {.max_total_bytes = 60'000'000});
  ASSERT_TRUE(all.has_value()) << all.error().message();
  EXPECT_EQ(all->size(), 5u);
}

TEST(NpzReader, DefaultBudgetIsHalfThePhysicalMemoryAtMost64GiB) {
  const uint64_t budget = DefaultNpzTotalBudget();
  EXPECT_GT(budget, uint64_t{0});
  EXPECT_LE(budget, uint64_t{64} << 30);
  EXPECT_LE(budget, static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
}

TEST_F(NpzReaderBadInput, RefusesStreamLongerThanDeclared) {
  const auto path = *dir_ / "liar.npz";
  ExpectError(ReadNpz(path), path, ErrorCode::kCorrupt,
              "entry 'x.npy': decompresses to more than its declared");
}

TEST_F(NpzReaderBadInput, RefusesNonNpyEntriesUnlessAskedToSkipThem) {
  const auto path = *dir_ / "extra.npz";
  ExpectError(ReadNpz(path), path, ErrorCode::kInvalidArgument, "entry 'README.txt' is not a .npy file");
  auto set = ReadNpz(path, {.skip_non_npy_entries = true});
  ASSERT_TRUE(set.has_value()) << set.error().message();
  EXPECT_EQ(set->Names(), std::vector<std::string>{"a"});
}

TEST_F(NpzReaderBadInput, NamesTheBadEntry) {
  const auto path = *dir_ / "badentry.npz";
  ExpectError(ReadNpz(path), path, ErrorCode::kCorrupt,
              "entry 'bad.npy': header declares 1000 bytes of data");
}

TEST_F(NpzReaderBadInput, RefusesNonZipFile) {
  const auto path = *dir_ / "random.npz";
  ExpectError(ReadNpz(path), path, ErrorCode::kCorrupt, "not a readable .npz");
}

TEST(NpzReader, ReportsMissingFileAsNotFound) {
  TempDir dir;
  ExpectError(ReadNpz(dir / "none.npz"), dir / "none.npz", ErrorCode::kNotFound, "no such file");
}

TEST(NpzReader, RefusesEmptyFile) {
  TempDir dir;
  testing::WriteFileString(dir / "e.npz", "");
  ExpectError(ReadNpz(dir / "e.npz"), dir / "e.npz", ErrorCode::kCorrupt, "not a readable .npz");
}

TEST(NpzWriter, KeepsOrderAndSlashedNames) {
  TempDir dir;
  TensorSet set;
  set.Set("z", Tensor::FromVector(DType::kUInt8, {1}, std::vector<uint8_t>{1}));
  set.Set("typical/images", Tensor::FromVector(DType::kUInt8, {1}, std::vector<uint8_t>{2}));
  set.Set("a", Tensor::FromVector(DType::kUInt8, {1}, std::vector<uint8_t>{3}));
  ASSERT_TRUE(WriteNpz(dir / "o.npz", set).has_value());
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"o.npz"});  // no temp file left
  auto back = ReadNpz(dir / "o.npz");
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->Names(), (std::vector<std::string>{"z", "typical/images", "a"}));
}

TEST(NpzWriter, IsDeterministic) {
  TempDir dir;
  TensorSet set;
  set.Set("x", Tensor::FromVector(DType::kFloat32, {3}, std::vector<float>{1, 2, 3}));
  ASSERT_TRUE(WriteNpz(dir / "1.npz", set).has_value());
  ASSERT_TRUE(WriteNpz(dir / "2.npz", set).has_value());
  EXPECT_EQ(testing::ReadFileString(dir / "1.npz"), testing::ReadFileString(dir / "2.npz"));
}

TEST(NpzWriter, RefusesStringTensorsAndEmptyNamesNamingTheFile) {
  TempDir dir;
  TensorSet strings;
  strings.Set("s", Tensor::FromStrings({1}, {"x"}));
  auto s = WriteNpz(dir / "s.npz", strings);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(s.error().message().starts_with((dir / "s.npz").string() + ": tensor 's': "))
      << s.error().message();
  TensorSet unnamed;
  unnamed.Set("", Tensor(DType::kFloat32, {1}));
  EXPECT_FALSE(WriteNpz(dir / "u.npz", unnamed).has_value());
  EXPECT_TRUE(testing::ListDir(dir.path()).empty());
}

}  // namespace
}  // namespace parity
