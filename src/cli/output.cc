#include "cli/output.h"

#include "core/atomic_file.h"

namespace parity::cli {

Status WriteJsonReport(const std::string& path, const nlohmann::json& j) {
  // Non-finite numbers become null in nlohmann's dump; replace invalid UTF-8
  // rather than throwing on a strange tensor name.
  std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return WithContext(WriteFileAtomic(path, std::string_view(text)), path);
}

}  // namespace parity::cli
