// Paths a signal handler must clean up (atomic_file.cc's temporary files,
// staged_dir.cc's staging folders, scratch_dir.cc's scratch folders): a fixed array that a handler can walk
// without allocating or locking. A slot is free (0), being filled (1) or live
// (2). Internal to src/core.
#pragma once

#include <atomic>
#include <cstring>
#include <string>

namespace parity::core_internal {

// Removes `name` under `parent_fd`, a file or a folder with what it holds, at
// most `depth` levels below it. Async-signal-safe (staged_dir.cc).
void RemoveTreeAt(int parent_fd, const char* name, int depth);

template <int kSlots>
class SignalSafePaths {
 public:
  static constexpr size_t kMaxPathBytes = 4096;
  static_assert(std::atomic<int>::is_always_lock_free);

  // The slot of `path`, or -1 when it is too long or every slot is taken
  // (the path is then not cleaned up on a signal).
  int Register(const std::string& path) {
    if (path.size() >= kMaxPathBytes) return -1;
    for (int i = 0; i < kSlots; ++i) {
      int expected = 0;
      if (slots_[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        std::memcpy(slots_[i].path, path.c_str(), path.size() + 1);
        slots_[i].state.store(2, std::memory_order_release);
        return i;
      }
    }
    return -1;
  }

  void Unregister(int slot) {
    if (slot >= 0) slots_[slot].state.store(0, std::memory_order_release);
  }

  // Calls fn(const char* path) on every live path; async-signal-safe when fn is.
  template <typename Fn>
  void ForEachLive(Fn&& fn) {
    for (auto& slot : slots_)
      if (slot.state.load(std::memory_order_acquire) == 2) fn(slot.path);
  }

 private:
  struct Slot {
    std::atomic<int> state{0};
    char path[kMaxPathBytes];
  };
  Slot slots_[kSlots];
};

}  // namespace parity::core_internal
