#include "engine/runner/runner_worker.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/worker_protocol.h"
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
  EXPECT_EQ(job->job.names, std::vector<std::string>{"y"});
  EXPECT_EQ(job->job.model, std::filesystem::absolute("m.onnx"));
  ASSERT_EQ(job->inputs.size(), 2u);
  EXPECT_TRUE(job->inputs.Find("/layer1/Relu_output_0")->BitwiseEquals(*Values().Find("/layer1/Relu_output_0")));
  EXPECT_EQ(job->limits.seconds, 0);  // no scope: no limit
}

// The parent's run limits travel with each job: a sample's time and memory
// limit bound its run in the child too (issue 56 class 3).
TEST(RunnerWorker, AJobCarriesTheParentsRunLimits) {
  testing::TempDir dir("parity_runner_limits");
  {
    ort::ScopedRunLimits limits({.seconds = 2.5, .memory_bytes = 64 << 20});
    ASSERT_TRUE(WriteRunnerJob(dir.path(), {.model = "m.onnx"}, Values()).has_value());
  }
  auto job = ReadRunnerJob(dir.path());
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->limits.seconds, 2.5);
  EXPECT_EQ(job->limits.memory_bytes, 64 << 20);
  EXPECT_EQ(ort::CurrentRunLimits().seconds, 0);  // the scope ended
}

// A job's own time limit replaces the scope's seconds in the child, as in
// Session::Run (the memory limit stays); its sample name (for errors) and
// arena choice travel too.
TEST(RunnerWorker, AJobsOwnTimeLimitAndSampleTravel) {
  testing::TempDir dir("parity_runner_timeout");
  {
    ort::ScopedRunLimits limits({.seconds = 2.5, .memory_bytes = 64 << 20});
    ASSERT_TRUE(WriteRunnerJob(dir.path(), {.model = "m.onnx", .timeout_s = 0.5, .sample = "s1", .cpu_mem_arena = true},
                               Values())
                    .has_value());
  }
  auto job = ReadRunnerJob(dir.path());
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->limits.seconds, 0.5);
  EXPECT_EQ(job->limits.memory_bytes, 64 << 20);
  EXPECT_EQ(job->job.sample, "s1");
  EXPECT_TRUE(job->job.cpu_mem_arena);
}

// The child's loop on a stored runner (no ORT), in the one worker protocol
// (core/worker_protocol.h): a ready line naming the runtime, an E line for
// a job it answered, a B line (one line) then an E line for a name it
// lacks, and exit 2 on a request that is not a framed record or is longer
// than one may be (issue 56 class 7).
TEST(RunnerWorker, ServesJobsInTheDatasetWorkersFraming) {
  testing::TempDir dir("parity_runner_serve");
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  ASSERT_TRUE(WriteRunnerJob(dir.path() / "a", {.model = "m.onnx", .names = {"y"}}, {}).has_value());
  ASSERT_TRUE(WriteRunnerJob(dir.path() / "b", {.model = "m.onnx", .names = {"no\nsuch"}}, {}).has_value());
  auto runner = MakeStoredRunner(Values(), {.kind = RanWhat::Kind::kStored,
                                            .ort = {.version = "9.9", .library = "/x/lib.so"},
                                            .source = "dump"});
  std::istringstream in(FormatEntryRecord(0, (dir.path() / "a").string()) + "\n" +
                        FormatEntryRecord(1, (dir.path() / "b").string()) + "\n");
  std::ostringstream out;
  EXPECT_EQ(ServeRunnerJobs(in, out, *runner), 0);
  std::istringstream lines(out.str());
  std::string ready, first, second, third, extra;
  std::getline(lines, ready);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, third);
  EXPECT_FALSE(std::getline(lines, extra)) << out.str();
  auto reply = ParseWorkerLine(ready);
  ASSERT_TRUE(reply.has_value()) << reply.error().message();
  EXPECT_EQ(reply->kind, WorkerLine::Kind::kReady);
  EXPECT_EQ(reply->facts, (std::vector<std::string>{"9.9", "/x/lib.so"}));
  EXPECT_EQ(first, "E\t0");
  auto failed = ParseWorkerLine(second);
  ASSERT_TRUE(failed.has_value()) << failed.error().message();
  EXPECT_EQ(failed->kind, WorkerLine::Kind::kFailed);
  EXPECT_EQ(failed->index, 1u);
  EXPECT_EQ(failed->id, kWholeJob);
  EXPECT_NE(failed->why.find("no such"), std::string::npos) << "newlines flattened: " << second;
  EXPECT_EQ(third, "E\t1");
  auto values = ReadJobValues(dir.path() / "a", "outputs");
  ASSERT_TRUE(values.has_value()) << values.error().message();
  EXPECT_TRUE(values->Find("y")->BitwiseEquals(*Values().Find("y")));

  std::string error;
  std::istringstream old_form("0\t" + (dir.path() / "a").string() + "\n");
  EXPECT_EQ(ServeRunnerJobs(old_form, out, *runner, &error), 2);
  EXPECT_NE(error.find("runner-worker: "), std::string::npos) << error;
  // A request line of 1 MiB is refused once 16 KiB of it are read.
  std::istringstream huge(std::string(1 << 20, 'a') + "\n");
  EXPECT_EQ(ServeRunnerJobs(huge, out, *runner, &error), 2);
  EXPECT_NE(error.find("longer than 16384 bytes"), std::string::npos) << error;
  EXPECT_GT(huge.rdbuf()->in_avail(), (1 << 20) - 20000) << "read past the bound";
}

}  // namespace
}  // namespace parity
