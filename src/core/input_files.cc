#include "core/input_files.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace parity {
namespace {

struct Registry {
  std::mutex mu;
  int scopes = 0;
  std::map<std::pair<dev_t, ino_t>, std::string> files;  // (device, inode) -> the path it was read as
  std::set<std::pair<dev_t, ino_t>> outputs;             // files this command wrote
};

Registry& Get() {
  static Registry r;  // never destroyed before a scope ends: a function-local static
  return r;
}

}  // namespace

InputTracking::InputTracking() {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  ++r.scopes;
}

InputTracking::~InputTracking() {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  if (--r.scopes == 0) {
    r.files.clear();
    r.outputs.clear();
  }
}

void NoteInputFile(const struct stat& st, const std::filesystem::path& path) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  if (r.scopes == 0 || r.outputs.contains({st.st_dev, st.st_ino})) return;
  r.files.try_emplace({st.st_dev, st.st_ino}, path.string());
}

void NoteOutputFile(const std::filesystem::path& path) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  if (r.scopes == 0) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) r.outputs.insert({st.st_dev, st.st_ino});
}

Status CheckNotAnInput(const std::filesystem::path& target) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  if (r.scopes == 0 || r.files.empty()) return {};
  struct stat st {};
  for (bool follow : {true, false}) {
    const int rc = follow ? ::stat(target.c_str(), &st) : ::lstat(target.c_str(), &st);
    if (rc != 0) continue;
    auto it = r.files.find({st.st_dev, st.st_ino});
    if (it == r.files.end()) continue;
    const bool same_name = it->second == target.string();
    return InvalidArgument(fmt::format(
        "{}: is {} of this command{}; parity never overwrites its inputs: give another output path",
        target.string(), same_name ? "an input" : fmt::format("the input '{}'", it->second),
        same_name ? "" : " (the same file, by a link)"));
  }
  return {};
}

}  // namespace parity
