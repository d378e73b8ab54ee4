#include "report/json/env_json.h"

namespace parity {

nlohmann::json EnvReportToJson(const Environment& env) {
  return {{"schema", "parity.env/1"}, {"env", EnvironmentToJson(env)}};
}

}  // namespace parity
