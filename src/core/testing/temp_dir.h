// The temporary-directory helper of parity's tests (unit tests, e2e tests
// and the test fixtures of benchmarks alike): a fresh directory with a unique
// name (mkdtemp) under the system temp dir, so that parallel ctest runs and
// repeated runs never share one.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace parity::testing {

// Creates `<temp dir>/<prefix>.XXXXXX` and returns its path; an empty path
// when it cannot be created. The caller removes it: use TempDir unless the
// directory must outlive a scope (a fixture's SetUpTestSuite) or is kept for
// a look after a failure.
inline std::filesystem::path MakeTempDir(const std::string& prefix = "parity_test") {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  return ::mkdtemp(tmpl.data()) != nullptr ? std::filesystem::path(tmpl) : std::filesystem::path();
}

// A MakeTempDir directory, removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "parity_test") : path_(MakeTempDir(prefix)) {}
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace parity::testing
