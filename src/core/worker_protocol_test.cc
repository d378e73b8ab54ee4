#include "core/worker_protocol.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/json_in.h"
#include "core/regular_file.h"

namespace parity {
namespace {

const char* KindName(WorkerLine::Kind k) {
  switch (k) {
    case WorkerLine::Kind::kReady: return "ready";
    case WorkerLine::Kind::kFailed: return "failed";
    case WorkerLine::Kind::kRow: return "row";
    case WorkerLine::Kind::kDone: return "done";
  }
  return "?";
}

// Every line of the shared fixture gets the verdict written there: the
// Python actors' parser (python/tests/test_worker_protocol.py) reads the
// same file, so the two sides of the protocol cannot drift apart.
TEST(WorkerProtocol, EveryFixtureLineGetsItsVerdict) {
  auto text = ReadRegularFile(std::string(PARITY_SOURCE_DIR) + "/tests/fixtures/worker_lines.json", 1 << 20);
  ASSERT_TRUE(text.has_value()) << text.error().message();
  auto doc = ParseJsonBounded(*text, "worker_lines.json");
  ASSERT_TRUE(doc.has_value()) << doc.error().message();
  ASSERT_GE((*doc)["lines"].size(), 20u);
  for (const auto& c : (*doc)["lines"]) {
    const std::string line = c["line"].get<std::string>(), want = c["kind"].get<std::string>();
    auto r = ParseWorkerLine(line);
    if (want == "refused") {
      EXPECT_FALSE(r.has_value()) << "accepted: " << line;
      if (!r) {
        EXPECT_EQ(r.error().message().find('\n'), std::string::npos) << r.error().message();
      }
      continue;
    }
    ASSERT_TRUE(r.has_value()) << line << ": " << r.error().message();
    EXPECT_EQ(KindName(r->kind), want) << line;
    if (c.contains("index")) {
      EXPECT_EQ(r->index, c["index"].get<uint64_t>()) << line;
    }
    if (c.contains("facts")) {
      EXPECT_EQ(r->facts, c["facts"].get<std::vector<std::string>>()) << line;
    }
    if (c.contains("id")) {
      EXPECT_EQ(r->id, c["id"].get<std::string>()) << line;
    }
    if (c.contains("why")) {
      EXPECT_EQ(r->why, c["why"].get<std::string>()) << line;
    }
  }
}

// What a worker formats parses back to the same meaning, whatever the cells
// hold (tabs, newlines, 100 kB), within the line bound; a control line past
// the bound is refused, a row of any length is a row.
TEST(WorkerProtocol, FormattedLinesRoundTripWithinTheBound) {
  auto ready = ParseWorkerLine(FormatReadyLine({"1.2\t3", "/a\nb.so"}));
  ASSERT_TRUE(ready.has_value()) << ready.error().message();
  EXPECT_EQ(ready->kind, WorkerLine::Kind::kReady);
  EXPECT_EQ(ready->facts, (std::vector<std::string>{"1.2 3", "/a b.so"}));
  auto done = ParseWorkerLine(FormatDoneLine(7));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->kind, WorkerLine::Kind::kDone);
  EXPECT_EQ(done->index, 7u);
  const std::string long_failure = FormatFailedLine(3, kWholeJob, std::string(100000, 'm'));
  EXPECT_LE(long_failure.size(), kMaxWorkerLineBytes);
  auto failed = ParseWorkerLine(long_failure);
  ASSERT_TRUE(failed.has_value()) << failed.error().message();
  EXPECT_EQ(failed->kind, WorkerLine::Kind::kFailed);
  EXPECT_EQ(failed->id, kWholeJob);
  EXPECT_TRUE(failed->why.ends_with("...")) << failed->why.size();
  EXPECT_FALSE(ParseWorkerLine("E\t1" + std::string(kMaxWorkerLineBytes, ' ')).has_value());
  auto row = ParseWorkerLine("R\t" + std::string(kMaxWorkerLineBytes * 2, '1'));
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->kind, WorkerLine::Kind::kRow);
}

// A request is a framed record; any path's bytes travel exactly, anything
// else is refused in one line; a worker reads a request line only up to
// its bound.
TEST(WorkerProtocol, RequestsAreFramedRecordsReadWithinTheirBound) {
  const std::string path = "/data/a\nb\tc\r\xff.npz";
  auto r = ParseEntryRecord(FormatEntryRecord(9, path));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->index, 9u);
  EXPECT_EQ(r->path, path);
  for (const std::string bad : {"0\t/etc/passwd", "{\"index\":-1,\"path_hex\":\"61\"}", "{\"index\":1,\"path_hex\":\"\"}",
                                "{\"index\":1,\"path_hex\":\"6100\"}", "{\"index\":1,\"path_hex\":\"6\"}",
                                "{\"index\":9007199254740993,\"path_hex\":\"61\"}",
                                "{\"index\":1,\"path_hex\":\"61\",\"x\":1}"}) {
    auto refused = ParseEntryRecord(bad);
    EXPECT_FALSE(refused.has_value()) << bad;
  }
  std::istringstream in("short\n" + std::string(100, 'x') + "\nlast");
  std::string line;
  bool too_long = false;
  ASSERT_TRUE(ReadBoundedLine(in, line, 50, too_long));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(too_long);
  ASSERT_TRUE(ReadBoundedLine(in, line, 50, too_long));
  EXPECT_TRUE(too_long);
  EXPECT_EQ(line.size(), 50u);
}

}  // namespace
}  // namespace parity
