// parity env: versions, execution providers, CPU, OS.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "core/json_out.h"
#include "engine/run/environment.h"
#include "report/env_console.h"
#include "report/env_json.h"

namespace parity::cli {

void RegisterEnv(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "versions (parity, ONNX Runtime, ONNX, compiler), execution providers, CPU, OS");
  auto json_path = std::make_shared<std::string>();
  cmd->add_option("--json", *json_path, "also write the facts as JSON to FILE");
  cmd->callback([json_path] {
    const Environment& e = CurrentEnvironment();
    fmt::print("{}", FormatEnvironment(e));
    if (!json_path->empty()) {
      if (auto s = WriteJsonFile(*json_path, EnvReportToJson(e)); !s) {
        ExitCode() = ReportError(s.error());
        return;
      }
    }
    ExitCode() = 0;
  });
}

}  // namespace parity::cli
