#include "core/short_name.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "core/sha256.h"

namespace parity {

std::string ShortName(std::string_view name) {
  if (name.size() <= kMaxShownNameBytes) return std::string(name);
  size_t cut = kShownNamePrefixBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return std::string(name.substr(0, cut)) + "..." + Sha256Hex(name).substr(0, 16);
}

namespace {

// Remembered names by their first kKeyBytes bytes (every one is longer than
// kMaxShownNameBytes), longest first under one key; a bitset of their first
// two bytes rules out most positions of a text without a hash lookup.
constexpr size_t kKeyBytes = 32;

struct LongName {
  std::string name;
  std::string shown;  // ShortName(name), computed once
};

struct Registry {
  std::shared_mutex mu;
  std::unordered_map<std::string, std::vector<LongName>> by_key;
  std::bitset<65536> first_two;
  std::atomic<size_t> longest{0};
};

Registry& TheRegistry() {
  static Registry* r = new Registry;  // never destroyed: writers may run during exit
  return *r;
}

size_t FirstTwo(std::string_view s) {
  return static_cast<unsigned char>(s[0]) << 8 | static_cast<unsigned char>(s[1]);
}

// The remembered name that starts at text[i], longest first; null when none.
const LongName* MatchAt(const Registry& r, std::string_view text, size_t i) {
  if (text.size() - i <= kMaxShownNameBytes || !r.first_two[FirstTwo(text.substr(i, 2))]) return nullptr;
  auto it = r.by_key.find(std::string(text.substr(i, kKeyBytes)));
  if (it == r.by_key.end()) return nullptr;
  for (const LongName& n : it->second)
    if (text.substr(i).starts_with(n.name)) return &n;
  return nullptr;
}

}  // namespace

void RememberLongName(std::string_view name) {
  if (name.size() <= kMaxShownNameBytes) return;
  Registry& r = TheRegistry();
  std::unique_lock lock(r.mu);
  auto& names = r.by_key[std::string(name.substr(0, kKeyBytes))];
  if (std::any_of(names.begin(), names.end(), [&](const LongName& n) { return n.name == name; })) return;
  names.push_back({std::string(name), ShortName(name)});
  std::sort(names.begin(), names.end(), [](const LongName& a, const LongName& b) { return a.name.size() > b.name.size(); });
  r.first_two.set(FirstTwo(name));
  if (name.size() > r.longest.load()) r.longest.store(name.size());
}

size_t ShortenLongNamesInto(std::string_view text, size_t scan_end, std::string& out) {
  Registry& r = TheRegistry();
  scan_end = std::min(scan_end, text.size());
  if (r.longest.load() == 0) {
    out.append(text.substr(0, scan_end));
    return scan_end;
  }
  std::shared_lock lock(r.mu);
  size_t copied = 0, i = 0;
  while (i < scan_end) {
    if (const LongName* n = MatchAt(r, text, i)) {
      out.append(text.substr(copied, i - copied)).append(n->shown);
      i += n->name.size();
      copied = i;
    } else {
      ++i;
    }
  }
  out.append(text.substr(copied, i - copied));
  return i;
}

std::string ShortenLongNames(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ShortenLongNamesInto(text, text.size(), out);
  return out;
}

size_t LongestRememberedName() { return TheRegistry().longest.load(); }

void ForgetLongNames() {
  Registry& r = TheRegistry();
  std::unique_lock lock(r.mu);
  r.by_key.clear();
  r.first_two.reset();
  r.longest.store(0);
}

}  // namespace parity
