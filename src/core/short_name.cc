#include "core/short_name.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <mutex>
#include <shared_mutex>
#include <cstdint>
#include <string>
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

// Remembered names in a compressed trie (a radix tree): each edge is a slice
// of one remembered name, each node has at most one child per next byte, so
// there are at most two nodes per name however long the prefixes they share.
// Registering a name walks its bytes once; finding the longest remembered
// name that starts at a text position walks the text's bytes once, the
// edges compared with memcmp: neither depends on how many names there are
// (issue 56, class 4: names grouped by their first 32 bytes and compared one
// by one were quadratic when 40,000 of them shared a 2 KB prefix). Debian has
// no kept Aho-Corasick library for C++; this needs only the longest match at
// a position, which a radix tree gives in the match's length. A bitset of
// the names' first two bytes rules out most positions of a text at once.
struct LongName {
  std::string name;
  std::string shown;  // ShortName(name), computed once
};

struct Node {
  uint32_t label_name = 0;  // the edge into this node: names[label_name].name[begin, end)
  uint32_t begin = 0, end = 0;
  int32_t terminal = -1;  // the name that ends here, if any
  std::vector<std::pair<unsigned char, uint32_t>> kids;  // by first byte, sorted
};

struct Registry {
  std::shared_mutex mu;
  std::vector<LongName> names;
  std::vector<Node> nodes = std::vector<Node>(1);  // nodes[0]: the root, the empty prefix
  std::bitset<65536> first_two;
  std::atomic<size_t> longest{0};

  std::string_view Label(const Node& n) const {
    return std::string_view(names[n.label_name].name).substr(n.begin, n.end - n.begin);
  }
  // The index of `node`'s child whose edge starts with `byte`, or kids.end().
  static auto FindKid(Node& node, unsigned char byte) {
    auto it = std::lower_bound(node.kids.begin(), node.kids.end(), byte,
                               [](const auto& kid, unsigned char b) { return kid.first < b; });
    return it != node.kids.end() && it->first == byte ? it : node.kids.end();
  }
};

Registry& TheRegistry() {
  static Registry* r = new Registry;  // never destroyed: writers may run during exit
  return *r;
}

size_t FirstTwo(std::string_view s) {
  return static_cast<unsigned char>(s[0]) << 8 | static_cast<unsigned char>(s[1]);
}

// Adds `name` (not yet remembered: false when it was) in one walk of its bytes.
bool Insert(Registry& r, std::string_view name) {
  uint32_t node = 0;
  size_t depth = 0;
  while (true) {
    if (depth == name.size()) {
      if (r.nodes[node].terminal >= 0) return false;
      r.names.push_back({std::string(name), ShortName(name)});
      r.nodes[node].terminal = static_cast<int32_t>(r.names.size() - 1);
      return true;
    }
    const unsigned char byte = static_cast<unsigned char>(name[depth]);
    auto kid = Registry::FindKid(r.nodes[node], byte);
    if (kid == r.nodes[node].kids.end()) {
      r.names.push_back({std::string(name), ShortName(name)});
      const uint32_t id = static_cast<uint32_t>(r.names.size() - 1);
      Node leaf{.label_name = id, .begin = static_cast<uint32_t>(depth), .end = static_cast<uint32_t>(name.size()),
                .terminal = static_cast<int32_t>(id)};
      r.nodes.push_back(std::move(leaf));
      auto& kids = r.nodes[node].kids;
      kids.insert(std::lower_bound(kids.begin(), kids.end(), std::pair(byte, uint32_t{0})),
                  {byte, static_cast<uint32_t>(r.nodes.size() - 1)});
      return true;
    }
    const uint32_t child = kid->second;
    const std::string_view label = r.Label(r.nodes[child]), rest = name.substr(depth);
    size_t common = 0;
    while (common < label.size() && common < rest.size() && label[common] == rest[common]) ++common;
    if (common < label.size()) {  // the name leaves the edge inside it: split the edge there
      Node mid{.label_name = r.nodes[child].label_name, .begin = r.nodes[child].begin,
               .end = static_cast<uint32_t>(r.nodes[child].begin + common)};
      r.nodes[child].begin += static_cast<uint32_t>(common);
      mid.kids.push_back({static_cast<unsigned char>(r.Label(r.nodes[child])[0]), child});
      r.nodes.push_back(std::move(mid));
      const uint32_t mid_id = static_cast<uint32_t>(r.nodes.size() - 1);
      Registry::FindKid(r.nodes[node], byte)->second = mid_id;
      node = mid_id;
    } else {
      node = child;
    }
    depth += common;
  }
}

// The longest remembered name that starts at text[i]; null when none.
const LongName* MatchAt(Registry& r, std::string_view text, size_t i) {
  if (text.size() - i <= kMaxShownNameBytes || !r.first_two[FirstTwo(text.substr(i, 2))]) return nullptr;
  const std::string_view rest = text.substr(i);
  const LongName* best = nullptr;
  uint32_t node = 0;
  size_t depth = 0;
  while (true) {
    if (r.nodes[node].terminal >= 0) best = &r.names[r.nodes[node].terminal];
    if (depth == rest.size()) return best;
    auto kid = Registry::FindKid(r.nodes[node], static_cast<unsigned char>(rest[depth]));
    if (kid == r.nodes[node].kids.end()) return best;
    const std::string_view label = r.Label(r.nodes[kid->second]);
    if (rest.size() - depth < label.size() || rest.compare(depth, label.size(), label) != 0) return best;
    node = kid->second;
    depth += label.size();
  }
}

}  // namespace

void RememberLongName(std::string_view name) {
  if (name.size() <= kMaxShownNameBytes) return;
  Registry& r = TheRegistry();
  std::unique_lock lock(r.mu);
  if (!Insert(r, name)) return;
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
  r.names.clear();
  r.nodes.assign(1, Node{});
  r.first_two.reset();
  r.longest.store(0);
}

}  // namespace parity
