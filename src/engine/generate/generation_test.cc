// The generation check's pieces without ORT: the tensor edits of a decode
// loop and the dump's generation record (good and malformed).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/testing/temp_dir.h"
#include "engine/generate/decode_tensors.h"
#include "engine/generate/generation_record.h"

namespace parity {
namespace {

TEST(DecodeTensors, LastLogitsTokensMaskAndPositions) {
  // logits [1, 2, 3]: the last position is {0.5, 2, 2}: argmax takes the first of a tie
  Tensor logits = Tensor::FromVector<float>(DType::kFloat32, {1, 2, 3}, {9, 0, 0, 0.5f, 2, 2});
  auto last = LastPositionLogits(logits);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->shape(), (Shape{1, 3}));
  EXPECT_EQ(GreedyTokens(*last), std::vector<int64_t>{1});
  auto mask = AppendOnes(Tensor::FromVector<int64_t>(DType::kInt64, {2, 2}, {1, 1, 0, 1}));
  ASSERT_TRUE(mask.has_value());
  EXPECT_EQ(std::vector<int64_t>(mask->view<int64_t>().begin(), mask->view<int64_t>().end()),
            (std::vector<int64_t>{1, 1, 1, 0, 1, 1}));
  auto pos = NextPositions(Tensor::FromVector<int64_t>(DType::kInt64, {1, 3}, {4, 5, 6}));
  ASSERT_TRUE(pos.has_value());
  EXPECT_EQ(pos->shape(), (Shape{1, 1}));
  EXPECT_EQ(pos->view<int64_t>()[0], 7);
  EXPECT_EQ(TokenTensor({5, 6}, DType::kInt32).view<int32_t>()[1], 6);
}

TEST(DecodeTensors, SlicesAlongAnAxis) {
  Tensor ids = Tensor::FromVector<int64_t>(DType::kInt64, {1, 4}, {10, 11, 12, 13});
  auto one = SliceLastAxis(ids, 2, 3);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->view<int64_t>()[0], 12);
  EXPECT_FALSE(SliceLastAxis(ids, 3, 5).has_value());
  // [1, 2, 3, 1]: the first 2 along axis 2 of each head
  Tensor present = Tensor::FromVector<float>(DType::kFloat32, {1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  auto head = SliceAxis(present, 2, 2);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(std::vector<float>(head->view<float>().begin(), head->view<float>().end()),
            (std::vector<float>{1, 2, 4, 5}));
  EXPECT_FALSE(SliceAxis(present, 2, 4).has_value());
}

// Issue 51: prefill against stepwise is judged where the mask keeps the
// tokens: a padded token's cache row is left out, and a row whose last token
// is padding leaves out its last logits.
TEST(DecodeTensors, KeptByMaskDropsWhatTheMaskDrops) {
  Tensor mask = Tensor::FromVector<int64_t>(DType::kInt64, {2, 3}, {0, 1, 1, 1, 1, 0});
  // a cache [batch 2, heads 1, length 3, dim 2]
  Tensor cache = Tensor::FromVector<float>(DType::kFloat32, {2, 1, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  int64_t dropped = 0;
  auto kept = KeptByMask(cache, mask, false, &dropped);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(std::vector<float>(kept->view<float>().begin(), kept->view<float>().end()),
            (std::vector<float>{0, 0, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0}));
  EXPECT_EQ(dropped, 2);
  Tensor logits = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  auto rows = KeptByMask(logits, mask, true, &dropped);
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(std::vector<float>(rows->view<float>().begin(), rows->view<float>().end()),
            (std::vector<float>{1, 2, 0, 0}));  // row 1 ends in padding
  EXPECT_EQ(dropped, 1);
  // Heads as many as the positions: the positions are the last axis but one.
  Tensor square = Tensor::FromVector<float>(DType::kFloat32, {1, 2, 2, 1}, {1, 2, 3, 4});
  auto kept_square = KeptByMask(square, Tensor::FromVector<int64_t>(DType::kInt64, {1, 2}, {0, 1}), false);
  ASSERT_TRUE(kept_square.has_value());
  EXPECT_EQ(std::vector<float>(kept_square->view<float>().begin(), kept_square->view<float>().end()),
            (std::vector<float>{0, 2, 0, 4}));
  // A mask of another batch, or no axis of its length: as it is.
  auto other = KeptByMask(cache, Tensor::FromVector<int64_t>(DType::kInt64, {1, 3}, {0, 1, 1}), false, &dropped);
  EXPECT_TRUE(other.has_value() && other->BitwiseEquals(cache));
  EXPECT_EQ(dropped, 0);
}

class GenerationRecordTest : public ::testing::Test {
 protected:
  TorchDump Dump(const std::string& generation) {
    std::ofstream(dir_.path() / "manifest.json")
        << R"({"schema": "parity.torch_dump/1", "torch_version": "2", "inputs": {"input_ids": "input_input_ids.npy"},
      "outputs": {"logits": "output_logits.npy"}, "layers": [])"
        << (generation.empty() ? "" : ", \"generation\": " + generation) << "}";
    auto d = LoadTorchDump(dir_.path());
    if (!d) ADD_FAILURE() << d.error().message();
    return d ? *d : TorchDump{.dir = dir_.path()};
  }
  static std::string Record(const std::string& step_file) {
    return R"({"schema": "parity.generation/1", "length": 1, "batch": 1, "prompt_length": 2,
      "token_input": "input_ids", "mask_input": null, "positions_input": null, "logits_output": "logits",
      "kv_map": [{"present": "present_key_0", "past": "past_key_0"}], "encoder": null, "stepwise": null,
      "steps": [{"step": 0, "tokens": [7], "logits": ")" + step_file + R"(",
                 "presents": {"present_key_0": {"file": null, "shape": [1, 2, 2, 4]}}}]})";
  }
  testing::TempDir dir_{"generation_record"};
};

TEST_F(GenerationRecordTest, OlderDumpsHaveNone) {
  auto r = LoadGenerationRecord(Dump(""));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_FALSE(r->has_value());
}

TEST_F(GenerationRecordTest, ReadsTheRolesStepsAndStatisticsOnlyPresents) {
  auto r = LoadGenerationRecord(Dump(Record("generate/step000_logits.npy")));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_TRUE(r->has_value());
  const GenerationRecord& g = **r;
  EXPECT_EQ(g.token_input, "input_ids");
  EXPECT_TRUE(g.mask_input.empty());
  ASSERT_EQ(g.kv.size(), 1u);
  EXPECT_EQ(g.kv[0].past, "past_key_0");
  ASSERT_EQ(g.steps.size(), 1u);
  EXPECT_EQ(g.steps[0].tokens, std::vector<int64_t>{7});
  ASSERT_EQ(g.steps[0].presents.size(), 1u);
  EXPECT_TRUE(g.steps[0].presents[0].file.empty());
  EXPECT_EQ(g.steps[0].presents[0].shape, (Shape{1, 2, 2, 4}));
}

TEST_F(GenerationRecordTest, RefusesFilesOutsideTheDumpAndWrongTypes) {
  auto escape = LoadGenerationRecord(Dump(Record("../x.npy")));
  ASSERT_FALSE(escape.has_value());
  EXPECT_NE(escape.error().message().find("not a file inside the dump"), std::string::npos);
  auto wrong = LoadGenerationRecord(Dump(R"({"schema": "parity.generation/1", "length": "16"})"));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("generation.length: expected an integer"), std::string::npos)
      << wrong.error().message();
}

// Issue 56 class 8: every field of a record is checked before it is used, in
// one line naming the field; a negative or uint64 length, steps out of order,
// negative token ids and shapes, and more steps than the limit are refused
// before any step is read (they were a FAIL, or accepted).
TEST_F(GenerationRecordTest, EveryFieldIsCheckedBeforeUseInOneLineNamingIt) {
  const nlohmann::json good = nlohmann::json::parse(Record("generate/step000_logits.npy"));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
    nlohmann::json g = good;
    edit(g);
    auto r = LoadGenerationRecord(Dump(g.dump()));
    if (r.has_value()) {
      ADD_FAILURE() << "accepted: " << g.dump().substr(0, 300);
      return;
    }
    EXPECT_NE(r.error().message().find(expected), std::string::npos) << r.error().message();
    EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  };
  refused([](auto& g) { g["length"] = -1; }, "generation.length: -1 is not in [1, 65536]");
  refused([](auto& g) { g["length"] = 18446744073709551615ull; }, "generation.length: 18446744073709551615 is not in");
  refused([](auto& g) { g["length"] = 0; }, "generation.length: 0 is not in");
  refused([](auto& g) { g["length"] = 2; }, "generation.steps: 1 steps for a length of 2");
  refused([](auto& g) { g["batch"] = -1; }, "generation.batch: -1 is not in");
  refused([](auto& g) { g["prompt_length"] = -5; }, "generation.prompt_length: -5 is not in");
  refused([](auto& g) { g["steps"][0]["step"] = 3; }, "generation.steps[0].step: 3 where step 0 is due");
  refused([](auto& g) { g["steps"][0]["tokens"] = {-1}; }, "generation.steps[0].tokens[0]: -1 is less than 0");
  refused([](auto& g) { g["steps"][0]["tokens"] = {1, 2}; }, "generation.steps[0].tokens: 2 tokens for a batch of 1");
  refused([](auto& g) { g["steps"][0]["presents"]["present_key_0"]["shape"] = {1, -2}; },
          "generation.steps[0].presents.present_key_0.shape[1]: -2 is not in");
  refused([](auto& g) { g["token_input"] = ""; }, "generation.token_input: an empty name");
  refused([](auto& g) { g["kv_map"][0] = 5; }, "generation.kv_map[0]: expected an object");
  refused([](auto& g) { g["steps"] = nlohmann::json::array(); }, "generation.steps: 0 steps for a length of 1");
  // 100,000 steps (of one token each) with a length to match: refused by
  // their count, before any step is parsed.
  refused(
      [](auto& g) {
        g["length"] = 100000;
        g["steps"] = nlohmann::json::array();
        for (int i = 0; i < 100000; ++i) g["steps"].push_back(nlohmann::json{{"step", i}});
      },
      "generation.length: 100000 is not in [1, 65536]");
  refused(
      [](auto& g) {
        g["steps"] = nlohmann::json::array();
        for (int i = 0; i < 70000; ++i) g["steps"].push_back(nlohmann::json{{"step", i}});
      },
      "generation.steps: 70000 steps for a length of 1 (at most 65536 steps)");
  refused([](auto& g) { g["batch"] = 1 << 20, g["length"] = 2; }, "are 2097152 tokens, more than 1048576");
}

}  // namespace
}  // namespace parity
