// Issue 46, class 5: long names amplified ~40x (two 1 MB output names made
// 177 MB of reports; 4000 names of 10 KB ran a check out of memory). A name
// longer than kMaxNameBytes is refused at load; a long one below it is shown
// on the console by its first bytes and a hash.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/npz.h"
#include "core/short_name.h"
#include "e2e_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::TempDir;

size_t LongestLine(const std::string& text) {
  size_t longest = 0;
  for (const std::string& line : e2e::Lines(text)) longest = std::max(longest, line.size());
  return longest;
}

TEST(SecurityNames, ANameAboveTheLimitIsRefusedAtLoadInOneShortLine) {
  TempDir tmp("parity_names");
  const std::string name(1 << 20, 'n');  // 1 MB, as the probe's
  ASSERT_TRUE(e2e::AddReluModel(0.5f, name).Save(tmp / "m.onnx"));
  TensorSet in;
  ASSERT_TRUE(in.Add("input", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));
  for (const std::string cmd : {"inspect", "check", "run"}) {
    std::vector<std::string> args = {cmd, (tmp / "m.onnx").string()};
    if (cmd == "run") args.insert(args.end(), {"--inputs", (tmp / "in.npz").string(), "-o", (tmp / "o.npz").string()});
    auto r = RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << cmd << r.err.substr(0, 500);
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << cmd;
    EXPECT_NE(r.err.find("more than the limit of 4096"), std::string::npos) << r.err.substr(0, 500);
    EXPECT_LT(r.err.size() + r.out.size(), 2000u) << cmd << ": the name is not repeated whole";
  }
  ASSERT_TRUE(e2e::AddReluModel(0.5f, std::string(kMaxNameBytes, 'n')).Save(tmp / "ok.onnx"));
  EXPECT_EQ(RunParity({"inspect", (tmp / "ok.onnx").string()}).exit_code, 0) << "a name at the limit loads";
}

TEST(SecurityNames, ALongNameIsShortenedOnTheConsole) {
  TempDir tmp("parity_names");
  const std::string name = std::string(kMaxNameBytes - 1, 'n') + "z";
  ASSERT_TRUE(e2e::AddReluModel(0.5f, name).Save(tmp / "m.onnx"));
  auto r = RunParity({"check", (tmp / "m.onnx").string(), "--runs", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(name), std::string::npos) << "the whole name reached the console";
  EXPECT_LT(LongestLine(r.out), 600u);
  EXPECT_NE(r.out.find("..." + ShortName(name).substr(ShortName(name).size() - 16)), std::string::npos) << r.out;
}

}  // namespace
}  // namespace parity
