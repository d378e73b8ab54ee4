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
  auto ep_libraries = std::make_shared<std::vector<std::string>>();
  auto ort_library = std::make_shared<std::string>();
  AddEpLibraryOption(cmd, ep_libraries.get(), ort_library.get());
  cmd->callback([json_path, ep_libraries, ort_library] {
    if (auto s = UseEpLibraries(*ep_libraries, *ort_library); !s) {
      ExitCode() = ReportError(s.error());
      return;
    }
    const Environment& e = CurrentEnvironment();
    if (!e.ep_error.empty()) {  // a library the user named (or PARITY_EP_LIBRARY) did not load
      ExitCode() = ReportError(Error(ErrorCode::kInvalidArgument, e.ep_error));
      return;
    }
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
