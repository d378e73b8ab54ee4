#include "engine/runner/runner_worker.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/testing/temp_dir.h"

namespace parity {
namespace {

TensorSet Values() {
  TensorSet v;
  v.Set("/layer1/Relu_output_0", Tensor::FromVector<float>(DType::kFloat32, {2}, {1.5f, -2}));
  v.Set("y", Tensor::FromVector<float>(DType::kFloat32, {1}, {3}));
  return v;
}

TEST(RunnerWorker, AJobTravelsWholeWithNamesThatAreNoZipPaths) {
  testing::TempDir dir("parity_runner_job");
  ASSERT_TRUE(WriteRunnerJob(dir.path(), {.model = "m.onnx", .names = {"y"}}, Values()).has_value());
  auto job = ReadRunnerJob(dir.path());
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->first.names, std::vector<std::string>{"y"});
  EXPECT_EQ(job->first.model, std::filesystem::absolute("m.onnx"));
  ASSERT_EQ(job->second.size(), 2u);
  EXPECT_TRUE(job->second.Find("/layer1/Relu_output_0")->BitwiseEquals(*Values().Find("/layer1/Relu_output_0")));
}

// The child's loop on a stored runner (no ORT): a ready line naming the
// runtime, an E line for a job it answered, a B line (one line) for a name
// it lacks, and exit 2 on a request that is not INDEX<TAB>DIR.
TEST(RunnerWorker, ServesJobsInTheDatasetWorkersFraming) {
  testing::TempDir dir("parity_runner_serve");
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  ASSERT_TRUE(WriteRunnerJob(dir.path() / "a", {.model = "m.onnx", .names = {"y"}}, {}).has_value());
  ASSERT_TRUE(WriteRunnerJob(dir.path() / "b", {.model = "m.onnx", .names = {"no\nsuch"}}, {}).has_value());
  auto runner = MakeStoredRunner(Values(), {.kind = RanWhat::Kind::kStored,
                                            .ort = {.version = "9.9", .library = "/x/lib.so"},
                                            .source = "dump"});
  std::istringstream in("0\t" + (dir.path() / "a").string() + "\n1\t" + (dir.path() / "b").string() + "\n");
  std::ostringstream out;
  EXPECT_EQ(ServeRunnerJobs(in, out, *runner), 0);
  std::istringstream lines(out.str());
  std::string ready, first, second, extra;
  std::getline(lines, ready);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, extra)) << out.str();
  EXPECT_EQ(ParseReadyLine(ready).version, "9.9");
  EXPECT_EQ(ParseReadyLine(ready).library, "/x/lib.so");
  EXPECT_EQ(first, "E\t0");
  EXPECT_TRUE(second.starts_with("B\t1\tjob\t")) << second;
  EXPECT_NE(second.find("no such"), std::string::npos) << "newlines flattened: " << second;
  auto values = ReadJobValues(dir.path() / "a", "outputs");
  ASSERT_TRUE(values.has_value()) << values.error().message();
  EXPECT_TRUE(values->Find("y")->BitwiseEquals(*Values().Find("y")));

  std::istringstream bad("not a request\n");
  EXPECT_EQ(ServeRunnerJobs(bad, out, *runner), 2);
}

}  // namespace
}  // namespace parity
