// The foundation's promises, through the real binary: bad input gives one
// clear line naming the file and exit 2, never a crash; inspect prints a
// model's signature and the checker's verdict on current opsets; Fortran-order
// tensors are read as numpy reads them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

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

TEST_F(Foundation, InspectChecksOpset18AndNewer) {
  for (int opset : {18, 20, 23}) {
    SCOPED_TRACE(opset);
    fs::path p = dir_ / fmt::format("opset{}.onnx", opset);
    ASSERT_TRUE(OpsetModel(opset).Save(p));
    auto r = e2e::RunParity({"inspect", p.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(fmt::format("ai.onnx={}", opset)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("checker       pass (ONNX 1.23"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("skipped"), std::string::npos) << r.out;
    r = e2e::RunParity({"run", p.string(), "--inputs", good_inputs_.string(), "-o", (dir_ / "o.npz").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

// numpy saves a transposed array with fortran_order True: every command that
// takes tensors reads the same values as from the C-order file.
TEST_F(Foundation, FortranOrderInputsGiveTheSameOutputsAsCOrder) {
  // x [2, 8] with distinct values, written column-major by hand: element
  // (i, j) at position j * 2 + i.
  std::vector<float> c_order(16), f_order(16);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j) c_order[i * 8 + j] = f_order[j * 2 + i] = 0.25f * (i * 8 + j) - 1.5f;
  const Tensor c_tensor = Tensor::FromVector(DType::kFloat32, {2, 8}, c_order);
  ASSERT_TRUE(WriteNpy(dir_ / "x_c.npy", c_tensor));
  std::string header = FileBytes(dir_ / "x_c.npy");
  const size_t data_at = header.size() - 16 * sizeof(float);
  std::string fortran = header.substr(0, data_at);
  const size_t flag = fortran.find("'fortran_order': False");
  ASSERT_NE(flag, std::string::npos);
  fortran.replace(flag, std::string("'fortran_order': False").size(), "'fortran_order': True ");
  fortran.append(reinterpret_cast<const char*>(f_order.data()), f_order.size() * sizeof(float));
  const fs::path f_path = Write("x.npy", fortran);

  auto c_run = e2e::RunParity({"run", model_.string(), "--inputs", (dir_ / "x_c.npy").string(), "-o",
                               (dir_ / "c_out.npz").string()});
  ASSERT_EQ(c_run.exit_code, 0) << c_run.err;
  auto f_run = e2e::RunParity({"run", model_.string(), "--inputs", f_path.string(), "-o", (dir_ / "f_out.npz").string()});
  ASSERT_EQ(f_run.exit_code, 0) << f_run.err;
  auto c_out = ReadNpz(dir_ / "c_out.npz");
  auto f_out = ReadNpz(dir_ / "f_out.npz");
  ASSERT_TRUE(c_out && f_out);
  ASSERT_TRUE(c_out->Contains("y") && f_out->Contains("y"));
  EXPECT_TRUE(c_out->Find("y")->BitwiseEquals(*f_out->Find("y")));
  // compare takes it too, and finds the two inputs identical.
  auto cmp = e2e::RunParity({"compare", (dir_ / "x_c.npy").string(), f_path.string()});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
}

}  // namespace
}  // namespace parity
