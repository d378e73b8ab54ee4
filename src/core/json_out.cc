#include "core/json_out.h"

#include <string_view>

#include "core/atomic_file.h"

namespace parity {

std::string ToJsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string ToJsonText(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

Status WriteJsonFile(const std::filesystem::path& path, const nlohmann::json& j) {
  const std::string text = ToJsonText(j, 2) + "\n";
  return WithContext(WriteFileAtomic(path, std::string_view(text)), path.string());
}

}  // namespace parity
