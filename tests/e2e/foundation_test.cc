// The foundation's promises, through the real binary: bad input gives one
// clear line naming the file and exit 2, never a crash; inspect prints a
// model's signature and says why the checker skipped an opset-18 model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/npy.h"
#include "core/npz.h"
#include "e2e_util.h"
#include "onnx/builtin_models.h"
#include "onnx/tensor_proto.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

class Foundation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::MakeTempDir("parity-foundation");
    model_ = dir_ / "model.onnx";
    ASSERT_TRUE(OpsetModel(17).Save(model_));
    Tensor x(DType::kFloat32, {2, 8});
    for (float& v : x.mutable_view<float>()) v = 0.5f;
    good_inputs_ = dir_ / "inputs.npz";
    TensorSet set;
    ASSERT_TRUE(set.Add("x", x));
    ASSERT_TRUE(WriteNpz(good_inputs_, set));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string FileBytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static std::string RandomBytes(size_t n) {
    std::mt19937 rng(7);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  }

  // One line on stderr naming `file`, exit 2, nothing on stdout that claims success.
  void ExpectBadInput(const std::vector<std::string>& args, const fs::path& file) {
    auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    auto lines = e2e::Lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find(file.filename().string()), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].rfind("parity: error: ", 0), 0u) << lines[0];
  }

  fs::path dir_, model_, good_inputs_;
};

TEST_F(Foundation, RunsGoodInput) {
  auto r = e2e::RunParity({"run", model_.string(), "--inputs", good_inputs_.string(), "-o", (dir_ / "o.npz").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = ReadNpz(dir_ / "o.npz");
  ASSERT_TRUE(out) << out.error().message();
  EXPECT_TRUE(out->Contains("y"));
}

TEST_F(Foundation, BadModelFilesGiveOneLineAndExit2) {
  const std::string good = FileBytes(model_);
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"empty.onnx", ""}, {"truncated.onnx", good.substr(0, good.size() / 2)}, {"random.onnx", RandomBytes(4096)}}) {
    fs::path p = Write(name, bytes);
    ExpectBadInput({"inspect", p.string()}, p);
    ExpectBadInput({"run", p.string(), "--inputs", good_inputs_.string(), "-o", (dir_ / "o.npz").string()}, p);
  }
}

TEST_F(Foundation, BadTensorFilesGiveOneLineAndExit2) {
  auto npy = SerializeNpy(Tensor(DType::kFloat32, {2, 8}));
  ASSERT_TRUE(npy);
  const std::string npy_bytes(reinterpret_cast<const char*>(npy->data()), npy->size());
  const std::string npz_bytes = FileBytes(good_inputs_);
  ASSERT_TRUE(WriteTensorProtoFile(dir_ / "good.pb", "x", Tensor(DType::kFloat32, {2, 8})));
  const std::string pb_bytes = FileBytes(dir_ / "good.pb");
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& [ext, good] : std::vector<std::pair<std::string, std::string>>{
           {"npy", npy_bytes}, {"npz", npz_bytes}, {"pb", pb_bytes}}) {
    cases.push_back({"empty." + ext, ""});
    cases.push_back({"truncated." + ext, good.substr(0, good.size() - 9)});
    cases.push_back({"random." + ext, RandomBytes(777)});
  }
  for (const auto& [name, bytes] : cases) {
    fs::path p = Write(name, bytes);
    ExpectBadInput({"run", model_.string(), "--inputs", p.string(), "-o", (dir_ / "o.npz").string()}, p);
    EXPECT_FALSE(fs::exists(dir_ / "o.npz")) << name;
  }
}

TEST_F(Foundation, MismatchedInputsNameTheInput) {
  TensorSet wrong_name, wrong_shape;
  ASSERT_TRUE(wrong_name.Add("images", Tensor(DType::kFloat32, {2, 8})));
  ASSERT_TRUE(wrong_shape.Add("x", Tensor(DType::kFloat32, {2, 9})));
  ASSERT_TRUE(WriteNpz(dir_ / "wrong_name.npz", wrong_name));
  ASSERT_TRUE(WriteNpz(dir_ / "wrong_shape.npz", wrong_shape));
  for (const char* file : {"wrong_name.npz", "wrong_shape.npz"}) {
    auto r = e2e::RunParity({"run", model_.string(), "--inputs", (dir_ / file).string(), "-o", (dir_ / "o.npz").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    auto lines = e2e::Lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find("input '"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("model.onnx"), std::string::npos) << lines[0];
  }
}

TEST_F(Foundation, MissingFilesGiveExit2) {
  ExpectBadInput({"inspect", (dir_ / "nope.onnx").string()}, dir_ / "nope.onnx");
  ExpectBadInput({"run", model_.string(), "--inputs", (dir_ / "nope.npz").string(), "-o", (dir_ / "o.npz").string()},
                 dir_ / "nope.npz");
  auto r = e2e::RunParity({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  r = e2e::RunParity({"run", model_.string(), "--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(Foundation, InspectPrintsTheBuiltinSignature) {
  fs::path p = dir_ / "conv_bn_relu.onnx";
  ASSERT_TRUE(ConvBnRelu().Save(p));
  auto r = e2e::RunParity({"inspect", p.string(), "--json", (dir_ / "i.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("input                    float32[1, 3, 224, 224]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output                   float32[1, 16, 224, 224]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BatchNormalization"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "i.json"));
}

TEST_F(Foundation, InspectSaysWhyTheCheckerSkippedOpset18) {
  fs::path p = dir_ / "opset18.onnx";
  ASSERT_TRUE(OpsetModel(18).Save(p));
  auto r = e2e::RunParity({"inspect", p.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ai.onnx=18"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x                        float32[2, 8]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checker skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("opset 18"), std::string::npos) << r.out;
  // And it still runs.
  r = e2e::RunParity({"run", p.string(), "--inputs", good_inputs_.string(), "-o", (dir_ / "o.npz").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace parity
