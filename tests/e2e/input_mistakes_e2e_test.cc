// Input mistakes are not model failures (issue 15): a wrong input name, a
// wrong shape, a float64 input, a PyTorch dump made for another model and an
// unwritable output path exit 2 with one line in every command, before any
// run; one input-binding rule for every command; readable command-line
// errors with "did you mean".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/npy.h"
#include "core/npz.h"
#include "e2e_util.h"
#include "onnx/builder.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

// images [1, 3, 8, 8] -> Conv+Relu -> GlobalAveragePool -> Flatten -> logits [1, 4].
Model SmallCnn() {
  ModelBuilder b(17, 5);
  auto x = b.Input("images", DType::kFloat32, {1, 3, 8, 8});
  {
    auto s = b.Scope("conv");
    x = b.Relu(b.ConvLayer(x, 3, 4, 3, 1, 1));
  }
  b.Output(b.Flatten(b.GlobalAveragePool(x)), "logits");
  return std::move(*b.Build());
}

Tensor Filled(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DType::kFloat64)
      t.mutable_view<double>()[i] = 0.01 * static_cast<double>(i % 17);
    else
      t.mutable_view<float>()[i] = 0.01f * static_cast<float>(i % 17);
  }
  return t;
}

class InputMistakes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = e2e::MakeTempDir("parity-input-mistakes");
    ASSERT_TRUE(SmallCnn().Save(dir_ / "m.onnx").has_value());
    auto npz = [](const std::string& file, const std::string& key, Tensor t) {
      TensorSet s;
      ASSERT_TRUE(s.Add(key, std::move(t)).has_value());
      ASSERT_TRUE(WriteNpz(dir_ / file, s).has_value());
    };
    npz("good.npz", "images", Filled(DType::kFloat32, {1, 3, 8, 8}));
    npz("wrong_name.npz", "image", Filled(DType::kFloat32, {1, 3, 8, 8}));
    npz("wrong_shape.npz", "images", Filled(DType::kFloat32, {1, 3, 16, 16}));
    npz("float64.npz", "images", Filled(DType::kFloat64, {1, 3, 8, 8}));
    ASSERT_TRUE(WriteNpy(dir_ / "input_images.npy", Filled(DType::kFloat32, {1, 3, 8, 8})).has_value());
    // PyTorch dumps: the right one, one whose input has another name, one
    // whose output has another shape, one none of whose layers is in the model.
    MakeDump("dump_ok", "images", {1, 4}, "conv", {1, 4, 8, 8});
    MakeDump("dump_input_name", "x", {1, 4}, "conv", {1, 4, 8, 8});
    MakeDump("dump_output_shape", "images", {1, 1000}, "conv", {1, 4, 8, 8});
    MakeDump("dump_other_model", "images", {1, 4}, "features.0.block", {1, 16, 112, 112});
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static void MakeDump(const std::string& name, const std::string& input, Shape out_shape, const std::string& module,
                       Shape layer_shape) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    ASSERT_TRUE(WriteNpy(d / "input.npy", Filled(DType::kFloat32, {1, 3, 8, 8})).has_value());
    ASSERT_TRUE(WriteNpy(d / "output.npy", Filled(DType::kFloat32, out_shape)).has_value());
    ASSERT_TRUE(WriteNpy(d / "layer.npy", Filled(DType::kFloat32, layer_shape)).has_value());
    std::ofstream(d / "manifest.json") << fmt::format(
        R"({{"schema": "parity.torch_dump/1", "torch_version": "2.14", "inputs": {{"{}": "input.npy"}},
            "outputs": {{"logits": "output.npy"}},
            "layers": [{{"file": "layer.npy", "module": "{}", "type": "Conv2d", "call": 0, "output_index": null,
                        "dtype": "float32", "shape": [{}]}}]}})",
        input, module, fmt::join(layer_shape, ", "));
  }

  static std::string P(const std::string& f) { return (dir_ / f).string(); }

  // Every command that takes --inputs, with the inputs file.
  static std::vector<std::vector<std::string>> Commands(const std::string& inputs) {
    return {
        {"run", P("m.onnx"), "--inputs", inputs, "-o", P("out.npz")},
        {"check", P("m.onnx"), "--inputs", inputs, "--runs", "1", "--warmup", "0"},
        {"baseline", P("m.onnx"), "--inputs", inputs, "-o", P("baseline_dir")},
        {"bench", P("m.onnx"), "--inputs", inputs, "--runs", "1", "--warmup", "0"},
        {"locate", P("m.onnx"), "--inputs", inputs},
    };
  }

  // Exit 2, exactly one line on stderr that contains `fragment`, and no output written.
  static void ExpectOneLineExit2(const std::vector<std::string>& args, const std::string& fragment) {
    SCOPED_TRACE(fmt::format("parity {}", fmt::join(args, " ")));
    auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(P("out.npz")));
    EXPECT_FALSE(fs::exists(P("baseline_dir")));
  }

  static inline fs::path dir_;
};

TEST_F(InputMistakes, AWrongInputNameExits2InEveryCommand) {
  for (const auto& args : Commands(P("wrong_name.npz")))
    ExpectOneLineExit2(args, "no tensor for model input 'images' (float32 [1, 3, 8, 8]); the file has 'image' "
                             "(did you mean 'images'?)");
}

TEST_F(InputMistakes, AWrongShapeExits2InEveryCommand) {
  for (const auto& args : Commands(P("wrong_shape.npz")))
    ExpectOneLineExit2(args, "input 'images' has shape [1, 3, 16, 16], the model takes float32 [1, 3, 8, 8]");
}

TEST_F(InputMistakes, AFloat64InputExits2InEveryCommand) {
  for (const auto& args : Commands(P("float64.npz")))
    ExpectOneLineExit2(args, "input 'images' is float64, the model takes float32 [1, 3, 8, 8]");
}

TEST_F(InputMistakes, ALoneNpyNamedInputImagesBindsInEveryCommand) {
  for (auto args : Commands(P("input_images.npy"))) {
    SCOPED_TRACE(args[0]);
    auto r = e2e::RunParity(args);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
    fs::remove_all(P("out.npz"));
    fs::remove_all(P("baseline_dir"));
  }
}

TEST_F(InputMistakes, ADumpForAnotherModelExits2InEveryCommand) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dump_input_name", "no tensor for model input 'images'"},
      {"dump_output_shape", "the dump's output 'logits' has shape [1, 1000]"},
      {"dump_other_model", "none of the dump's 1 layers aligns with a tensor of"},
  };
  for (const auto& [dump, fragment] : cases) {
    ExpectOneLineExit2({"check", P("m.onnx"), "--torch", P(dump), "--runs", "1", "--warmup", "0"}, fragment);
    ExpectOneLineExit2({"locate", P("m.onnx"), "--reference", "torch:" + P(dump)}, fragment);
    ExpectOneLineExit2({"align", P("m.onnx"), "--torch", P(dump)}, fragment);
  }
  // The dump that belongs to the model is accepted (whatever its verdict).
  auto r = e2e::RunParity({"align", P("m.onnx"), "--torch", P("dump_ok")});
  EXPECT_NE(r.exit_code, 2) << r.err;
}

TEST_F(InputMistakes, AnUnwritableOutputPathExits2BeforeAnyWork) {
  const std::string bad = "/proc/parity-no-such-dir/x";
  ExpectOneLineExit2({"run", P("m.onnx"), "--inputs", P("good.npz"), "-o", bad + ".npz"}, "cannot write into");
  ExpectOneLineExit2({"check", P("m.onnx"), "--inputs", P("good.npz"), "--report", bad}, "--report");
  ExpectOneLineExit2({"check", P("m.onnx"), "--inputs", P("good.npz"), "--json", bad + ".json"}, "--json");
  ExpectOneLineExit2({"locate", P("m.onnx"), "--inputs", P("good.npz"), "--json", bad + ".json"}, "--json");
  ExpectOneLineExit2({"bench", P("m.onnx"), "--json", bad + ".json"}, "--json");
  ExpectOneLineExit2({"baseline", P("m.onnx"), "--inputs", P("good.npz"), "-o", P("baseline_dir"), "--json",
                      bad + ".json"},
                     "--json");
  ExpectOneLineExit2({"compare", P("good.npz"), P("good.npz"), "--json", bad + ".json"}, "--json");
  ExpectOneLineExit2({"check", P("m.onnx"), "--inputs", P("good.npz"), "--report", P("good.npz")},
                     "exists and is not a directory");
}

// Validates with Debian's python3-jsonschema; empty when valid.
std::string SchemaErrors(const std::string& schema, const fs::path& report) {
  const std::string script =
      "import json, sys, jsonschema\n"
      "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n";
  auto r = e2e::RunProgram({PARITY_PYTHON, "-c", script,
                            (fs::path(PARITY_SOURCE_DIR) / "docs" / schema).string(), report.string()});
  return r.exit_code == 0 ? "" : r.err + r.out;
}

// The reports of align, locate --reference torch:DIR, bench, baseline (and
// its manifest) and baseline verify validate against their schemas in docs/ (the check,
// compare and locate reports: report_test and docs_e2e_test).
TEST_F(InputMistakes, EveryOtherReportValidatesAgainstItsSchemaInDocs) {
  ASSERT_EQ(e2e::RunProgram({PARITY_PYTHON, "-c", "import jsonschema"}).exit_code, 0)
      << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  struct Case {
    std::vector<std::string> args;
    std::string schema;
  };
  const std::vector<Case> cases = {
      {{"align", P("m.onnx"), "--torch", P("dump_ok"), "--json", P("align.json")}, "align.schema.json"},
      {{"locate", P("m.onnx"), "--reference", "torch:" + P("dump_ok"), "--json", P("lt.json")},
       "locate_torch.schema.json"},
      {{"bench", P("m.onnx"), "--runs", "2", "--warmup", "0", "--json", P("bench.json")}, "bench.schema.json"},
      {{"baseline", "verify", P("bl"), P("m.onnx"), "--json", P("blv.json")}, "baseline_verify.schema.json"},
  };
  // The baseline that `baseline verify` re-checks: its report and its manifest.
  ASSERT_EQ(e2e::RunParity({"baseline", P("m.onnx"), "--inputs", P("good.npz"), "-o", P("bl"), "--json",
                            P("bl.json")})
                .exit_code,
            0);
  EXPECT_EQ(SchemaErrors("baseline.schema.json", P("bl.json")), "");
  EXPECT_EQ(SchemaErrors("baseline.schema.json", dir_ / "bl" / "manifest.json"), "");
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("parity {}", fmt::join(c.args, " ")));
    auto r = e2e::RunParity(c.args);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    EXPECT_EQ(SchemaErrors(c.schema, P(c.args.back())), "");
  }
  fs::remove_all(P("bl"));
}

TEST(CommandLine, ReadableErrorsWithDidYouMean) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"chek", "m.onnx"}, "unknown command 'chek' (did you mean 'check'?)"},
      {{"check", "m.onnx", "--report-dir", "r"}, "check: unknown option '--report-dir' (did you mean '--report'?)"},
      {{"locate", "m.onnx", "--tagret", "t.json"}, "locate: unknown option '--tagret' (did you mean '--target'?)"},
      {{"compare", "a.npz", "b.npz", "c.npz"}, "compare: unexpected argument 'c.npz'"},
      {{"check", "m.onnx", "--atol", "-1"}, "--atol: expected a number >= 0, got '-1'"},
      {{"compare", "a.npz", "b.npz", "--rtol", "abc"}, "--rtol: expected a number >= 0, got 'abc'"},
      {{"run", "m.onnx", "--inputs", "i.npz", "-o", "o.npz", "--threads", "-2"},
       "--threads: expected a number >= 0, got '-2'"},
      {{"check", "m.onnx", "--runs", "0"}, "--runs: expected a number > 0, got '0'"},
      {{"compare", "a.npz", "b.npz", "--mode", "fuzzy"}, "--mode: fuzzy not in"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("parity {}", fmt::join(c.args, " ")));
    auto r = e2e::RunParity(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--help)"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace parity
