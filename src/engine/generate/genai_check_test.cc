// The GenAI package check's own parts: the package folder checked before
// anything runs, the free run judged against PyTorch's tokens, and a prompt
// failing when the free run leaves them before teacher forcing does.
#include "engine/generate/genai_check.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/scratch_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

CorpusRecord Tokens(const std::vector<int64_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  CorpusRecord r{.prompts = 1, .steps = n, .top_k = 1, .vocab = 16};
  r.tokens = Tensor::FromVector<int64_t>(DType::kInt64, {1, n}, tokens);
  return r;
}

TEST(GenAiCheck, TheFreeRunDivergesAtItsFirstOtherTokenAndAnEarlyStopIsNone) {
  const CorpusRecord r = Tokens({5, 6, 7, 8});
  CorpusPrompt row;
  JudgeFreeRun(r, 0, {5, 6, 9, 8}, row);
  EXPECT_EQ(row.free_steps, 4);
  EXPECT_EQ(row.free_divergent, 2);
  JudgeFreeRun(r, 0, {5, 6}, row);  // stopped early (an end token): no divergence
  EXPECT_EQ(row.free_steps, 2);
  EXPECT_FALSE(row.free_divergent);
}

TEST(GenAiCheck, APromptFailsWhenTheFreeRunLeavesBeforeTeacherForcingDoes) {
  CorpusPrompt p;
  p.steps.assign(4, CorpusStep{});
  EXPECT_TRUE(CorpusPromptPasses(p, 1e-12));
  p.free_steps = 4, p.free_divergent = 1;  // the logits agree throughout, the runtime's tokens do not
  EXPECT_TRUE(p.FreeRunDepartsEarlier());
  EXPECT_FALSE(CorpusPromptPasses(p, 1e-12));
  p.steps[1].agree = false;  // both leave at step 1: the loop follows its logits
  EXPECT_FALSE(p.FreeRunDepartsEarlier());
  p.steps[1].agree = true, p.steps[3].agree = false;
  EXPECT_TRUE(p.FreeRunDepartsEarlier());
  p.free_divergent.reset();
  EXPECT_FALSE(p.FreeRunDepartsEarlier());
}

TEST(GenAiCheck, APackageFolderIsCheckedInOneLineNamingWhatIsWrong) {
  auto scratch = ScratchDir::Create("genai-test");
  ASSERT_TRUE(scratch);
  const fs::path dir = scratch->path();
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  auto message = [&] {
    auto s = CheckGenAiPackage(dir);
    return s ? std::string("ok") : s.error().message();
  };
  EXPECT_NE(message().find("a folder without genai_config.json is not an ORT GenAI package"), std::string::npos);
  write("genai_config.json", "[1, 2]");
  EXPECT_NE(message().find("genai_config.json: not a JSON object"), std::string::npos);
  write("genai_config.json", R"({"model": {"decoder": {"filename": 3}}})");
  EXPECT_NE(message().find("model.decoder.filename: expected the decoder's file name"), std::string::npos);
  write("genai_config.json", R"({"model": {"decoder": {"filename": "model.onnx"}}})");
  EXPECT_NE(message().find("which is not a file"), std::string::npos);
  write("model.onnx", "x");
  EXPECT_EQ(message(), "ok");
}

}  // namespace
}  // namespace parity
