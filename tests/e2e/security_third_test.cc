// Issue 46, third hostile-input review: the reading side. Class 7: a dump
// layer file that is a FIFO or a folder was a FAIL (exit 1). Class 8:
// datasets, --reference-outputs and `run --inputs DIR` followed symlinks out
// of their folder; a FIFO entry was skipped silently. Class 11: a report
// folder left in the dataset broke every rerun. Class 12: dataset-worker read
// an index past size_t as 0 and held request lines of any length. Class 13:
// `run` on an IR version ORT cannot load exited 3. Each test builds its input
// and drives the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/npy.h"
#include "core/npz.h"
#include "e2e_util.h"
#include "proto_wire.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::RunProgram;
using e2e::TempDir;

using e2e::WriteText;

using e2e::ExpectExit;

// DIR/m.onnx (AddReluModel: `input` [1, 4] -> `output`) and DIR/data with
// two samples.
void Dataset(const fs::path& dir) {
  ASSERT_TRUE(e2e::AddReluModel().Save(dir / "m.onnx"));
  fs::create_directories(dir / "data");
  for (const char* name : {"a.npz", "b.npz"}) {
    TensorSet s;
    ASSERT_TRUE(s.Add("input", e2e::AddReluInput()));
    ASSERT_TRUE(WriteNpz(dir / "data" / name, s));
  }
}

e2e::ProcessResult CheckDataset(const fs::path& dir, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"check", (dir / "m.onnx").string(), "--dataset", (dir / "data").string()};
  args.insert(args.end(), more.begin(), more.end());
  return RunParity(args);
}

// Class 7: a layer file of the dump that is a FIFO or a folder is bad input.
TEST(SecurityThird, ADumpLayerFileThatIsAFifoOrAFolderIsBadInputNotAFail) {
  TempDir tmp("parity_third");
  ASSERT_TRUE(e2e::AddReluModel(0.5f, "output", "block").Save(tmp / "m.onnx"));
  fs::create_directories(tmp / "dump");
  ASSERT_TRUE(WriteNpy(tmp / "dump" / "x.npy", e2e::AddReluInput()));
  Tensor y = e2e::AddReluInput();
  for (float& v : y.mutable_view<float>()) v = 1.5f;
  ASSERT_TRUE(WriteNpy(tmp / "dump" / "y.npy", y));
  WriteText(tmp / "dump" / "manifest.json",
        R"({"schema": "parity.torch_dump/1", "torch_version": "2", "inputs": {"input": "x.npy"},
            "outputs": {"output": "y.npy"}, "layers": [{"file": "layer.npy", "module": "block", "type": "Block",
            "call": 0, "output_index": null, "dtype": "float32", "shape": [1, 4], "is_leaf": true}]})");
  ASSERT_EQ(::mkfifo((tmp / "dump" / "layer.npy").c_str(), 0600), 0);
  auto fifo = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string(), "--runs", "1"});
  ExpectExit(fifo, 2);
  EXPECT_NE(fifo.err.find("FIFO"), std::string::npos) << fifo.err;
  fs::remove(tmp / "dump" / "layer.npy");
  fs::create_directories(tmp / "dump" / "layer.npy");
  auto folder = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string(), "--runs", "1"});
  ExpectExit(folder, 2);
  EXPECT_NE(folder.err.find("directory"), std::string::npos) << folder.err;
}

// Class 8: a dataset's files are its own, like a dump's: a symlink to a file
// outside, a symlinked folder inside an entry, a symlinked reference file are
// refused (--allow-symlinks follows them); a FIFO named like a sample is
// refused, not skipped.
TEST(SecurityThird, DatasetsFollowTheDumpsSymlinkRuleAndRefuseFifos) {
  TempDir tmp("parity_third");
  ASSERT_NO_FATAL_FAILURE(Dataset(tmp.path()));
  ASSERT_EQ(CheckDataset(tmp.path()).exit_code, 0);

  fs::copy_file(tmp / "data" / "a.npz", tmp / "outside.npz");
  fs::create_symlink(tmp / "outside.npz", tmp / "data" / "c.npz");
  auto link = CheckDataset(tmp.path());
  ExpectExit(link, 2);
  EXPECT_NE(link.err.find("c.npz: a symlink"), std::string::npos) << link.err;
  EXPECT_NE(link.err.find("--allow-symlinks"), std::string::npos) << link.err;
  ExpectExit(CheckDataset(tmp.path(), {"--allow-symlinks"}), 0);
  fs::remove(tmp / "data" / "c.npz");

  ASSERT_EQ(::mkfifo((tmp / "data" / "f.npz").c_str(), 0600), 0);
  auto fifo = CheckDataset(tmp.path());
  ExpectExit(fifo, 2);
  EXPECT_NE(fifo.err.find("f.npz: a FIFO"), std::string::npos) << fifo.err;
  fs::remove(tmp / "data" / "f.npz");

  // A per-sample folder whose sizes/ is a symlink to a folder outside.
  fs::create_directories(tmp / "data" / "s" );
  fs::create_directories(tmp / "elsewhere");
  ASSERT_TRUE(WriteNpy(tmp / "data" / "s" / "input.npy", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpy(tmp / "elsewhere" / "input.npy", e2e::AddReluInput()));
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "data" / "s" / "sizes");
  auto sizes = CheckDataset(tmp.path());
  ExpectExit(sizes, 2);
  EXPECT_NE(sizes.err.find("sizes: a symlink"), std::string::npos) << sizes.err;
  fs::remove_all(tmp / "data" / "s");

  // --reference-outputs: DIR/STEM.npz a symlink.
  fs::create_directories(tmp / "ref");
  TensorSet out;
  Tensor o = e2e::AddReluInput();
  for (float& v : o.mutable_view<float>()) v = 1.5f;
  ASSERT_TRUE(out.Add("output", o));
  ASSERT_TRUE(WriteNpz(tmp / "ref" / "a.npz", out));
  ASSERT_TRUE(WriteNpz(tmp / "elsewhere" / "b.npz", out));
  fs::create_symlink(tmp / "elsewhere" / "b.npz", tmp / "ref" / "b.npz");
  auto ref = CheckDataset(tmp.path(), {"--reference-outputs", (tmp / "ref").string()});
  ExpectExit(ref, 2);
  EXPECT_NE(ref.err.find("b.npz: a symlink"), std::string::npos) << ref.err;
}

// Class 8: `run --inputs DIR` follows the same rule.
TEST(SecurityThird, RunInputsFolderRefusesSymlinksInsideIt) {
  TempDir tmp("parity_third");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  fs::create_directories(tmp / "in");
  ASSERT_TRUE(WriteNpy(tmp / "outside.npy", e2e::AddReluInput()));
  fs::create_symlink(tmp / "outside.npy", tmp / "in" / "input.npy");
  auto r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in").string(), "-o",
                      (tmp / "o.npz").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("input.npy: a symlink"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "o.npz"));
}

// Class 11: a report written into the dataset folder is no sample of it.
TEST(SecurityThird, ParitysOwnReportInsideTheDatasetIsNoEntry) {
  TempDir tmp("parity_third");
  ASSERT_NO_FATAL_FAILURE(Dataset(tmp.path()));
  ExpectExit(CheckDataset(tmp.path(), {"--report", (tmp / "data" / "rep").string()}), 0);
  ASSERT_TRUE(fs::exists(tmp / "data" / "rep" / "report.json"));
  auto again = CheckDataset(tmp.path(), {"--report", (tmp / "data" / "rep").string()});
  ExpectExit(again, 0);
  EXPECT_EQ(again.err.find("rep"), std::string::npos) << again.err;
}

// Class 12: the worker's request lines are framed records of bounded length;
// an index past 2^53 or a line of any length ends it with one line (exit 2),
// and its tolerance policy must be a regular file (a FIFO blocked it).
TEST(SecurityThird, DatasetWorkerRefusesHugeIndicesLongLinesAndFifos) {
  TempDir tmp("parity_third");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  WriteText(tmp / "c.json", "{}");
  WriteText(tmp / "t.json", "{}");
  const std::string worker = std::string(PARITY_BINARY) + " dataset-worker " + (tmp / "m.onnx").string() +
                             " --target-config " + (tmp / "c.json").string() + " --reference-config " +
                             (tmp / "c.json").string() + " --tolerance-policy ";
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  auto fifo = RunProgram({"timeout", "60", "sh", "-c", worker + (tmp / "fifo").string() + " < /dev/null"});
  ExpectExit(fifo, 2);
  EXPECT_NE(fifo.err.find("FIFO"), std::string::npos) << fifo.err;

  const std::string ok = worker + (tmp / "t.json").string();
  auto huge = RunProgram({"sh", "-c", "printf '{\"index\":18446744073709551616,\"path_hex\":\"2f\"}\\n' | " + ok});
  ExpectExit(huge, 2);
  EXPECT_NE(huge.err.find("index"), std::string::npos) << huge.err;
  auto old_form = RunProgram({"sh", "-c", "printf '0\\t/etc/passwd\\n' | " + ok});
  ExpectExit(old_form, 2);
  // 200 MB on one line: refused after the bound, not held whole.
  auto long_line = RunProgram({"sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' a | " + ok});
  ExpectExit(long_line, 2);
  EXPECT_NE(long_line.err.find("longer than"), std::string::npos) << long_line.err;
  if (!e2e::kSanitized) EXPECT_LT(long_line.peak_rss_bytes, int64_t{150} << 20) << e2e::kRssUnderAsan;
  // A record that is one: the entry is judged.
  TensorSet s;
  ASSERT_TRUE(s.Add("input", e2e::AddReluInput()));
  const fs::path odd = tmp / "a\nb.npz";  // a newline in the name stays one entry
  ASSERT_TRUE(WriteNpz(odd, s));
  std::string hex;
  for (unsigned char c : odd.string()) hex += fmt::format("{:02x}", c);
  auto good = RunProgram({"sh", "-c", "printf '{\"index\":3,\"path_hex\":\"" + hex + "\"}\\n' | " + ok});
  ExpectExit(good, 0);
  EXPECT_NE(good.out.find("R\t3\t"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("E\t3"), std::string::npos) << good.out;
}

// Class 13: an IR version no ONNX Runtime loads is the model's fault.
TEST(SecurityThird, RunOnAnUnloadableIrVersionIsBadInput) {
  TempDir tmp("parity_third");
  using e2e::Pb;
  const auto value = [](const std::string& name) {
    return Pb().Bytes(1, name).Msg(2, Pb().Msg(1, Pb().Int(1, 1).Msg(2, Pb().Msg(1, Pb().Int(1, 1)).Msg(1, Pb().Int(1, 4)))));
  };
  Pb node;
  node.Bytes(1, "x").Bytes(2, "y").Bytes(3, "relu").Bytes(4, "Relu");
  Pb graph;
  graph.Msg(1, node).Bytes(2, "g").Msg(11, value("x")).Msg(12, value("y"));
  for (int ir : {99, 1000}) {  // 13 and 14 load in this ORT
    Pb model;
    model.Int(1, ir).Msg(7, graph).Msg(8, Pb().Int(2, 17));
    WriteText(tmp / "m.onnx", model.bytes);
    ASSERT_TRUE(WriteNpy(tmp / "x.npy", e2e::AddReluInput()));
    auto r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "x.npy").string(), "-o",
                        (tmp / "o.npz").string()});
    ExpectExit(r, 2);
    EXPECT_NE(r.err.find("IR version"), std::string::npos) << r.err;
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace parity
