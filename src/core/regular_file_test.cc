// Readers refuse what is not a regular file without blocking or reading it,
// and cap a file's size before allocating (docs/security.md).
#include "core/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "core/io_test_util.h"
#include "core/npy.h"
#include "core/npz.h"
#include "core/output_dir.h"
#include "core/run_config.h"
#include "core/sha256.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void ExpectNotRegular(const Status& s, const std::string& what) {
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument) << s.error().message();
  EXPECT_NE(s.error().message().find("not a regular file (" + what + ")"), std::string::npos) << s.error().message();
}

template <typename T>
Status AsStatus(const Result<T>& r) {
  if (r) return {};
  return std::unexpected(r.error());
}

TEST(RegularFile, EveryReaderRefusesAFifoWithoutBlocking) {
  TempDir dir;
  const fs::path fifo = dir / "x.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  ExpectNotRegular(AsStatus(ReadRegularFile(fifo, 1024)), "a FIFO");
  ExpectNotRegular(AsStatus(ReadNpy(fifo)), "a FIFO");
  ExpectNotRegular(AsStatus(ReadNpz(fifo)), "a FIFO");
  ExpectNotRegular(AsStatus(Sha256FileHex(fifo)), "a FIFO");
  ExpectNotRegular(AsStatus(LoadRunConfig(fifo.string())), "a FIFO");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RegularFile, ASymlinkToDevZeroIsRefusedNotReadTo4GB) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir / "config.json");
  ExpectNotRegular(AsStatus(LoadRunConfig((dir / "config.json").string())), "a device");
  ExpectNotRegular(AsStatus(ReadRegularFile(dir / "config.json", kMaxManifestBytes)), "a device");
  ExpectNotRegular(AsStatus(ReadRegularFile(dir.path(), 10)), "a directory");
}

TEST(RegularFile, SizeIsCappedBeforeReading) {
  TempDir dir;
  {
    std::ofstream out(dir / "big.json");
    out << std::string(2048, ' ');
  }
  auto r = ReadRegularFile(dir / "big.json", 1024);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("2048 bytes, more than the limit of 1024"), std::string::npos);
  auto ok = ReadRegularFile(dir / "big.json", 4096);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 2048u);
  auto missing = ReadRegularFile(dir / "none", 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  auto range = ReadRegularFileRange(dir / "big.json", 2000, 100);
  ASSERT_FALSE(range);
  EXPECT_EQ(range.error().code(), ErrorCode::kCorrupt);
}

TEST(StoredRunConfig, RefusesPathsAndFileWritingSessionEntries) {
  using nlohmann::json;
  auto path = RunConfigFromJson(json{{"opt", "all"}, {"optimized_model_path", "/home/u/.bashrc"}},
                                ConfigOrigin::kStored);
  ASSERT_FALSE(path);
  EXPECT_NE(path.error().message().find("optimized_model_path"), std::string::npos);
  for (const char* key : {"session.optimized_model_external_initializers_file_name", "ep.context_file_path",
                          "ep.context_enable", "session.save_model_format", "session.node_partition_config_file"}) {
    auto r = RunConfigFromJson(json{{"session_config", {{key, "x"}}}}, ConfigOrigin::kStored);
    ASSERT_FALSE(r) << key;
    EXPECT_NE(r.error().message().find(key), std::string::npos) << r.error().message();
  }
  auto unprintable = RunConfigFromJson(json{{"disable_optimizers", {"A\x1b[2K"}}}, ConfigOrigin::kStored);
  EXPECT_FALSE(unprintable);
  // What only changes how ORT computes is allowed.
  auto ok = RunConfigFromJson(json{{"opt", "all"},
                                   {"intra_op_threads", 1},
                                   {"disable_optimizers", {"BiasGeluFusion"}},
                                   {"session_config", {{"session.intra_op.allow_spinning", "0"}}}},
                              ConfigOrigin::kStored);
  ASSERT_TRUE(ok) << ok.error().message();
  // The user's own --config still may (it is named on the command line).
  EXPECT_TRUE(RunConfigFromJson(json{{"optimized_model_path", "o.onnx"}}, ConfigOrigin::kUser));
}

TEST(OutputDir, RefusesAFolderOfTheUsersOwnFilesAndAcceptsItsOwn) {
  TempDir dir;
  EXPECT_TRUE(CheckOutputDir(dir / "new", "parity.repro"));
  EXPECT_TRUE(CheckOutputDir(dir.path(), "parity.repro"));  // empty
  {
    std::ofstream out(dir / "model.onnx");
    out << "the user's model";
  }
  auto s = CheckOutputDir(dir.path(), "parity.repro");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("did not write"), std::string::npos);
  EXPECT_FALSE(ClaimOutputDir(dir.path(), "parity.repro"));
  EXPECT_FALSE(fs::exists(dir / ".parity-output"));
  ASSERT_TRUE(ClaimOutputDir(dir / "r", "parity.repro"));
  {
    std::ofstream out(dir / "r" / "model.onnx");
    out << "written by parity";
  }
  EXPECT_TRUE(CheckOutputDir(dir / "r", "parity.repro"));
  EXPECT_FALSE(CheckOutputDir(dir / "r", "parity.report"));
  EXPECT_FALSE(CheckOutputDir(dir / "model.onnx", "parity.repro"));  // not a directory
}

}  // namespace
}  // namespace parity
