#include "core/short_name.h"

#include "core/sha256.h"

namespace parity {

std::string ShortName(std::string_view name) {
  if (name.size() <= kMaxShownNameBytes) return std::string(name);
  size_t cut = kShownNamePrefixBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return std::string(name.substr(0, cut)) + "..." + Sha256Hex(name).substr(0, 16);
}

}  // namespace parity
