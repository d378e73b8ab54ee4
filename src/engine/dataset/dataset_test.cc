#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "core/testing/temp_dir.h"
#include "engine/dataset/dataset_rows.h"
#include "engine/dataset/dataset_source.h"
#include "engine/dataset/dataset_stats.h"

namespace parity {
namespace {

DatasetRow Row(std::string id, double score, int64_t rows = 0, int64_t agree = 0) {
  return {.id = std::move(id), .cells = {DatasetCell{.max_abs = score / 10, .score = score, .top1_rows = rows,
                                                      .top1_agree = agree}}};
}

TEST(DatasetRows, RoundTripBitForBit) {
  DatasetRow row{.id = "part\t01/s7", .entry = 12, .sample = "s7",
                 .cells = {{.max_abs = 0.1 + 0.2, .cosine = 1 - 1e-17, .snr_db = 26.123456789012345,
                            .mismatch_share = 1.0 / 3, .score = std::numeric_limits<double>::infinity(),
                            .passed = false, .top1_rows = 1, .top1_agree = 0}}};
  auto parsed = ParseDatasetLine(FormatDatasetRow(row), 1);
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_TRUE(parsed->row);
  const DatasetCell& c = parsed->row->cells[0];
  EXPECT_EQ(parsed->row->id, "part 01/s7");  // a tab in a name cannot split the line
  EXPECT_EQ(parsed->row->entry, 12u);
  EXPECT_EQ(c.max_abs, row.cells[0].max_abs);
  EXPECT_EQ(c.cosine, row.cells[0].cosine);
  EXPECT_EQ(c.snr_db, row.cells[0].snr_db);
  EXPECT_EQ(c.mismatch_share, row.cells[0].mismatch_share);
  EXPECT_TRUE(std::isinf(c.score));
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.flipped());
  auto bad = ParseDatasetLine(FormatDatasetBad(3, "broken", "not a zip\nfile"), 1);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->row);
  EXPECT_EQ(bad->bad.id, "broken");
  EXPECT_EQ(bad->bad.error, "not a zip file");
  EXPECT_FALSE(ParseDatasetLine("R\t1\ts\tid\t0x1p+0", 1));  // too few fields: corrupt, not a crash
}

TEST(DatasetStats, QuantilesAreNumpysLinearOnes) {
  const std::vector<double> v = {1, 2, 3, 4, 10};
  EXPECT_EQ(Quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.9), 7.6);  // numpy.quantile([1,2,3,4,10], 0.9)
  EXPECT_EQ(Quantile(v, 1.0), 10);
  EXPECT_EQ(Quantile({5}, 0.99), 5);
}

TEST(DatasetStats, PicksTheWorstThenFlipsUnderTheCap) {
  DatasetReport r{.outputs = {"logits"}};
  r.rows = {Row("a", 0.5, 1, 1), Row("b", 9, 1, 0), Row("c", 1, 1, 0), Row("d", 2, 1, 1), Row("e", 0.1, 1, 0)};
  SummarizeDataset(r);
  EXPECT_EQ(r.worst.front().id, "b");
  EXPECT_EQ(r.flips_total, 3);
  EXPECT_EQ(r.summaries[0].flipped, (std::vector<std::string>{"b", "c", "e"}));
  EXPECT_DOUBLE_EQ(r.summaries[0].top1_agreement(), 2.0 / 5);
  // Worst 2 are b (a flip) and d; the cap of 2 flips then adds only c.
  const auto picks = PickSamplesToLocate(r, 2, 2);
  ASSERT_EQ(picks.size(), 3u);
  EXPECT_EQ(r.rows[picks[0].row].id, "b");
  EXPECT_TRUE(picks[0].worst && picks[0].flipped);
  EXPECT_EQ(r.rows[picks[1].row].id, "d");
  EXPECT_EQ(r.rows[picks[2].row].id, "c");
  EXPECT_FALSE(picks[2].worst);
}

TEST(DatasetSource, ListsSampleFilesAndFoldersSorted) {
  testing::TempDir dir;
  for (const char* name : {"b.npz", "a.npy", "notes.txt"}) std::ofstream(dir.path() / name) << "x";
  std::filesystem::create_directory(dir.path() / "c");
  auto entries = ListDatasetEntries(dir.path().string());
  ASSERT_TRUE(entries) << entries.error().message();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].filename(), "a.npy");
  EXPECT_EQ((*entries)[2].filename(), "c");
  EXPECT_EQ(DatasetSampleId((*entries)[1], "s3", 2), "b/s3");
  EXPECT_EQ(DatasetSampleId((*entries)[1], "default", 1), "b");
  auto none = ListDatasetEntries((dir.path() / "*.zip").string());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no sample files match"), std::string::npos);
  EXPECT_EQ(ListDatasetEntries((dir.path() / "missing").string()).error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace parity
