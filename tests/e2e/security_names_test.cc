// Issue 46, class 5: long names amplified ~40x (two 1 MB output names made
// 177 MB of reports; 4000 names of 10 KB ran a check out of memory). A name
// longer than kMaxNameBytes is refused at load; a long one below it is shown
// on the console and in every report file by its first bytes and a hash.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/npz.h"
#include "core/io_test_util.h"
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

// A failing check repeats its names most: per sample, per output, per
// localized node, in four files. Before, two names of 3-4 KB (an output and
// the scope of every node) made 1.5 MB of reports and console from a 40 KB
// model; now each file shows them as ShortName does and never whole.
TEST(SecurityNames, EveryReportFileShowsALongNameShortened) {
  TempDir tmp("parity_names");
  const std::string output = std::string(4000, 'o') + "z", scope = std::string(3000, 's') + "y";
  ASSERT_TRUE(e2e::AddReluModel(0.5f, output, scope).Save(tmp / "ref.onnx"));
  ASSERT_TRUE(e2e::AddReluModel(0.7f, output, scope).Save(tmp / "m.onnx"));
  auto r = RunParity({"check", (tmp / "m.onnx").string(), "--reference-model", (tmp / "ref.onnx").string(), "--runs",
                      "1", "--report", (tmp / "rep").string(), "--json", (tmp / "r.json").string()});
  ASSERT_EQ(r.exit_code, 1) << r.err.substr(0, 500);
  size_t total = r.out.size() + r.err.size();
  EXPECT_EQ(r.out.find(output), std::string::npos) << "the whole output name reached the console";
  EXPECT_EQ(r.out.find(scope), std::string::npos) << "a whole node name reached the console";
  for (const fs::path& file : {tmp / "rep" / "report.json", tmp / "rep" / "report.html", tmp / "rep" / "junit.xml",
                               tmp / "r.json"}) {
    const std::string text = testing::ReadFileString(file);
    total += text.size();
    EXPECT_EQ(text.find(output), std::string::npos) << file << " holds the whole output name";
    EXPECT_EQ(text.find(scope), std::string::npos) << file << " holds a whole node name";
    EXPECT_NE(text.find(ShortName(output)), std::string::npos) << file << " does not name the output";
  }
  const size_t model = fs::file_size(tmp / "m.onnx");
  EXPECT_LT(total, 10 * model) << "reports and console: " << total << " bytes for a model of " << model;
}

}  // namespace
}  // namespace parity
