#include "core/scratch_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <utility>

#include "core/signal_safe_paths.h"

namespace parity {
namespace {

// The scratch folders a signal handler removes (signal_safe_paths.h).
core_internal::SignalSafePaths<32> g_scratch;

}  // namespace

void RemovePendingScratchDirs() {
  g_scratch.ForEachLive([](const char* path) { core_internal::RemoveTreeAt(AT_FDCWD, path, 8); });
}

Result<ScratchDir> ScratchDir::Create(const std::string& tag) {
  std::error_code ec;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  std::string tmpl = ((ec ? std::filesystem::path("/tmp") : temp) / ("parity_" + tag + ".XXXXXX")).string();
  // mkdtemp fills the template in place: the slot is registered once the
  // name exists. A signal between the two leaves an empty folder at most.
  if (::mkdtemp(tmpl.data()) == nullptr)
    return RuntimeError(fmt::format("cannot create a scratch directory like '{}'", tmpl));
  return ScratchDir(tmpl, g_scratch.Register(tmpl));
}

ScratchDir::ScratchDir(ScratchDir&& o) noexcept
    : path_(std::exchange(o.path_, {})), slot_(std::exchange(o.slot_, -1)) {}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  g_scratch.Unregister(slot_);
}

}  // namespace parity
