#include "engine/ray/driver_python.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/testing/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// PATH set for one test, restored after.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

void WriteFile(const fs::path& p, mode_t mode) {
  std::ofstream(p) << "#!/bin/sh\n";
  ::chmod(p.c_str(), mode);
}

TEST(PythonPath, ANameIsTheFirstExecutableFileOfThatNameOnPath) {
  testing::TempDir tmp;
  for (const char* d : {"a", "b", "c"}) fs::create_directories(tmp.path() / d);
  WriteFile(tmp.path() / "a" / "py", 0644);     // not executable: skipped
  fs::create_directories(tmp.path() / "b" / "py");  // a folder: skipped
  WriteFile(tmp.path() / "c" / "py", 0755);
  ScopedPath path((tmp.path() / "a").string() + "::" + (tmp.path() / "b").string() + ":" +
                  (tmp.path() / "c").string());
  EXPECT_EQ(PythonPath("py"), (tmp.path() / "c" / "py").string());
  EXPECT_EQ(PythonPath("nowhere"), "nowhere");  // not found: left as it is (FindDriverPython refuses it)
  EXPECT_EQ(PythonPath("./py"), "./py");        // a path is not searched
}

}  // namespace
}  // namespace parity
