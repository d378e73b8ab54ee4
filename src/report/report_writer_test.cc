#include "report/report_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/testing/temp_dir.h"
#include "report/report_test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing_util::MakeSampleReport;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(WriteCheckReport, WritesAllThreeFilesWhole) {
  const testing::TempDir dir_tmp("parity_report");
  const fs::path dir = dir_tmp.path() / "nested" / "report";  // created by the call
  ASSERT_TRUE(WriteCheckReport(MakeSampleReport(), dir));
  for (const char* name : {kReportJsonName, kReportHtmlName, kReportJUnitName})
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  const auto j = nlohmann::json::parse(ReadAll(dir / kReportJsonName));
  EXPECT_EQ(j["schema"], "parity.check/1");
  EXPECT_TRUE(ReadAll(dir / kReportHtmlName).ends_with("</html>\n"));
  EXPECT_TRUE(ReadAll(dir / kReportJUnitName).ends_with("</testsuites>\n"));
  // Nothing else but parity's output-folder marker: no temp files left behind.
  EXPECT_TRUE(fs::exists(dir / ".parity-output"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 4);
  // A second report into the same folder is allowed: parity wrote it.
  EXPECT_TRUE(WriteCheckReport(MakeSampleReport(), dir));
}

TEST(WriteCheckReport, UnwritableDirectoryFailsAndLeavesNothing) {
  const testing::TempDir base_tmp("parity_report");
  const fs::path base = base_tmp.path();
  std::ofstream(base / "file") << "x";
  const fs::path dir = base / "file" / "report";  // a regular file stands where a directory must be
  const auto status = WriteCheckReport(MakeSampleReport(), dir);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("report"), std::string::npos) << status.error().message();
  EXPECT_EQ(std::distance(fs::directory_iterator(base), fs::directory_iterator{}), 1);
}

TEST(WriteCheckReport, FailingLastFileRemovesTheOthers) {
  const testing::TempDir dir_tmp("parity_report");
  const fs::path dir = dir_tmp.path();
  // A directory where junit.xml goes: the folder cannot be replaced whole, so
  // it is refused before anything is written and left as it was.
  fs::create_directories(dir / kReportJUnitName / "occupied");
  std::ofstream(dir / ".parity-output") << "parity.report\n";  // an earlier report's folder
  const auto status = WriteCheckReport(MakeSampleReport(), dir);
  ASSERT_FALSE(status);
  EXPECT_FALSE(fs::exists(dir / kReportJsonName));
  EXPECT_FALSE(fs::exists(dir / kReportHtmlName));
  EXPECT_TRUE(fs::is_directory(dir / kReportJUnitName));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 2);  // no temp files
}

// docs/security.md: a folder of the user's own files is never written into.
TEST(WriteCheckReport, RefusesAFolderOfTheUsersOwnFilesAndLeavesThem) {
  const testing::TempDir dir_tmp("parity_report");
  const fs::path dir = dir_tmp.path();
  std::ofstream(dir / kReportHtmlName) << "the user's page";
  const auto status = WriteCheckReport(MakeSampleReport(), dir);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("did not write"), std::string::npos) << status.error().message();
  EXPECT_EQ(ReadAll(dir / kReportHtmlName), "the user's page");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
}

}  // namespace
}  // namespace parity
