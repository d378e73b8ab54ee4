// The parent side of a child runner against scripted children (no second
// ORT): the one worker protocol's answers (core/worker_protocol.h) are read
// up to the job's E line, a failure is the job's error, and a child out of
// step or gone is stopped with one line.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/testing/temp_dir.h"
#include "engine/runner/runner.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// A stand-in for `parity runner-worker`: says it is ready, then answers
// each request line with `answer` (printf format: %s is the job's index).
std::string Worker(const fs::path& dir, const std::string& answer) {
  const fs::path script = dir / "worker.sh";
  std::ofstream(script) << "#!/bin/sh\nprintf 'O\\t9.9\\t/x/lib.so\\n'\n"
                        << "while read line; do i=$(printf '%s' \"$line\" | sed 's/.*\"index\":\\([0-9]*\\).*/\\1/'); "
                        << "printf '" << answer << "' \"$i\" \"$i\"; done\n";
  ::chmod(script.c_str(), 0755);
  return script.string();
}

Result<TensorSet> RunOnce(const std::string& binary) {
  // Any file that is not this process's ORT makes the runner a child.
  PARITY_ASSIGN_OR_RETURN(auto runner, MakeOrtRunner({.ort_library = "/bin/sh"}, binary));
  EXPECT_EQ(runner->ran().ort.version, "9.9");
  return runner->Run({.model = "m.onnx", .names = {"y"}}, {});
}

TEST(ChildRunner, AFailedJobIsItsFailureLineThenItsEnd) {
  testing::TempDir dir("parity_child_runner");
  auto r = RunOnce(Worker(dir.path(), "B\\t%s\\tjob\\tnode x failed\\nE\\t%s\\n"));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("node x failed"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("onnxruntime 9.9"), std::string::npos) << r.error().message();
}

TEST(ChildRunner, AnAnswerOutOfStepStopsTheChildInOneLine) {
  testing::TempDir dir("parity_child_runner");
  for (const std::string& answer : {std::string("R\\tjunk\\n"), std::string("E\\t7\\n"),
                                    std::string("O\\tagain\\n"), std::string("E\\tx\\n")}) {
    auto r = RunOnce(Worker(dir.path(), answer));
    ASSERT_FALSE(r.has_value()) << answer;
    const std::string& m = r.error().message();
    EXPECT_NE(m.find("unexpected answer from the child (stopped)"), std::string::npos) << answer << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(ChildRunner, AChildThatEndsBeforeItsAnswerDied) {
  testing::TempDir dir("parity_child_runner");
  auto r = RunOnce(Worker(dir.path(), "B\\t%s\\tjob\\tno end line\\n' \"$i\"; exit 3; printf '"));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find(kRunnerDied), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace parity
