#include "core/mapped_file.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace parity {
namespace {

constexpr int64_t kMapFrom = int64_t{1} << 20;

// The live mappings a SIGBUS handler looks up: a fixed array, no allocation
// or lock. A slot is free (0), being filled (1) or live (2).
struct Slot {
  std::atomic<int> state{0};
  uintptr_t begin = 0, end = 0;
  char path[4096] = {};
};
Slot g_slots[16];

int Register(const void* begin, size_t size, const std::string& path) {
  if (path.size() >= sizeof(Slot::path)) return -1;
  for (int i = 0; i < 16; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
      g_slots[i].begin = reinterpret_cast<uintptr_t>(begin);
      g_slots[i].end = g_slots[i].begin + size;
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;  // not registered: a SIGBUS in it is then reported as a crash
}

void ForgetMapping(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

}  // namespace

const char* MappedFileAt(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  for (const Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2 && a >= s.begin && a < s.end) return s.path;
  return nullptr;
}

Result<MappedFile> MappedFile::Open(const std::filesystem::path& path, int64_t max_bytes) {
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  if (file.size() > max_bytes)
    return InvalidArgument(fmt::format("{}: file is {} bytes, more than the limit of {} bytes", path.string(),
                                       file.size(), max_bytes));
  MappedFile m;
  if (file.size() >= kMapFrom) {
    void* p = ::mmap(nullptr, static_cast<size_t>(file.size()), PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (p != MAP_FAILED) {
      m.map_ = p;
      m.size_ = static_cast<size_t>(file.size());
      m.slot_ = Register(p, m.size_, path.string());
      return m;
    }
  }
  PARITY_ASSIGN_OR_RETURN(m.owned_, ReadRegularFile(path, max_bytes));
  return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owned_(std::move(other.owned_)),
      slot_(std::exchange(other.slot_, -1)) {}

MappedFile::~MappedFile() {
  ForgetMapping(slot_);
  if (map_ != nullptr) ::munmap(map_, size_);
}

std::string_view MappedFile::bytes() const {
  if (map_ != nullptr) return {static_cast<const char*>(map_), size_};
  return owned_;
}

}  // namespace parity
