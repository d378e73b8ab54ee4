#include "engine/ray/ray_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/testing/temp_dir.h"
#include "engine/ray/corpus_worker.h"
#include "engine/ray/dataset_worker.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool Has(const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
  auto at = std::find(argv.begin(), argv.end(), flag);
  return at != argv.end() && at + 1 != argv.end() && *(at + 1) == value;
}

TEST(RayDriver, ALocalClusterKeepsItsFilesInTheScratchFolder) {
  const auto argv = RayDriverArgv({.python = "py"}, {.actors = 3}, "/tmp/s", /*progress=*/false);
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "py");
  EXPECT_EQ(argv[2], "parity._ray_engine");
  EXPECT_TRUE(Has(argv, "--entries", "/tmp/s/entries.jsonl"));
  EXPECT_TRUE(Has(argv, "--out", "/tmp/s/rows.txt"));
  EXPECT_TRUE(Has(argv, "--actors", "3"));
  EXPECT_TRUE(Has(argv, "--temp-dir", "/tmp/s/ray"));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--address"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--progress"), 0);
  // The worker's command line follows "--": this binary, appended by the caller.
  ASSERT_EQ(argv[argv.size() - 2], "--");
  EXPECT_FALSE(argv.back().empty());
}

TEST(RayDriver, AClusterToJoinIsAddressedAndNoTempDirIsGiven) {
  const auto argv = RayDriverArgv({.python = "py"}, {.address = "ray://h:10001"}, "/tmp/s", /*progress=*/true);
  EXPECT_TRUE(Has(argv, "--address", "ray://h:10001"));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--temp-dir"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--progress"), 1);
}

// The driver's exit status is the error's class: 0 ran, 2 it refused the run
// (the user's input), anything else a runtime failure; the scratch folder
// stays for the caller (ScratchDir) unless an interrupt came.
TEST(RayDriver, ExitTwoIsTheUsersMistakeAndOtherFailuresAreRuntime) {
  testing::TempDir dir("parity_ray_driver");
  EXPECT_TRUE(RunRayDriver({"/bin/sh", "-c", "exit 0"}, "", dir.path()).has_value());
  auto refused = RunRayDriver({"/bin/sh", "-c", "exit 2"}, "", dir.path());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  auto failed = RunRayDriver({"/bin/sh", "-c", "exit 5"}, "", dir.path());
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), ErrorCode::kRuntime);
  EXPECT_NE(failed.error().message().find("exit 5"), std::string::npos) << failed.error().message();
  EXPECT_TRUE(fs::exists(dir.path()));
}

TEST(RayDriver, TheDriverSeesPythonPathPrefixed) {
  testing::TempDir dir("parity_ray_pythonpath");
  EXPECT_TRUE(RunRayDriver({"/bin/sh", "-c", "case \"$PYTHONPATH\" in /the/checkout/python*) exit 0;; esac; exit 7"},
                           "/the/checkout/python", dir.path())
                  .has_value());
  EXPECT_FALSE(RunRayDriver({"/bin/sh", "-c", "case \"$PYTHONPATH\" in /the/checkout/python*) exit 0;; esac; exit 7"},
                            "", dir.path())
                   .has_value());
}

// The workers' loops refuse what they cannot load before they answer
// anything (the driver sees the worker exit with one line).
TEST(RayWorkers, AWorkerWhoseFilesDoNotLoadWritesNothing) {
  std::istringstream in("");
  std::ostringstream out;
  auto dataset = ServeDatasetWorker({.model = "/no/model.onnx", .target_config = "/no/target.json",
                                     .reference_config = "/no/reference.json", .tolerance = "/no/tolerance.json"},
                                    in, out);
  ASSERT_FALSE(dataset.has_value());
  EXPECT_NE(dataset.error().message().find("/no/target.json"), std::string::npos) << dataset.error().message();
  auto corpus = ServeCorpusWorker({.model = "/no/model.onnx", .corpus = "/no/corpus", .target_config = "/no/t.json"},
                                  in, out);
  ASSERT_FALSE(corpus.has_value());
  EXPECT_NE(corpus.error().message().find("/no/corpus"), std::string::npos) << corpus.error().message();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace parity
