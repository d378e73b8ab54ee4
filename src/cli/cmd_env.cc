// parity env: versions, execution providers, CPU, OS.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "core/json_out.h"
#include "engine/run/environment.h"
#include "engine/runner/runner.h"
#include "report/console/env_console.h"
#include "report/json/env_json.h"
#include "report/runtimes_report.h"

namespace parity::cli {
namespace {

// Each --runtime PATH: which ORT it is, said by a child that loads it
// (engine/runner/runner.h); the process's own library needs none.
Result<std::vector<OrtFact>> Runtimes(const std::vector<std::string>& paths) {
  std::vector<OrtFact> out;
  for (const auto& path : paths) {
    RunConfig config;
    config.ort_library = path;
    PARITY_ASSIGN_OR_RETURN(auto runner, MakeOrtRunner(config));
    out.push_back(runner->ran().ort);
  }
  return out;
}

}  // namespace

void RegisterEnv(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "versions (parity, ONNX Runtime, ONNX, compiler), execution providers, CPU, OS");
  auto json_path = std::make_shared<std::string>();
  cmd->add_option("--json", *json_path, "also write the facts as JSON to FILE");
  auto ep_libraries = std::make_shared<std::vector<std::string>>();
  auto ort_library = std::make_shared<std::string>();
  AddEpLibraryOption(cmd, ep_libraries.get(), ort_library.get());
  auto runtimes = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--runtime", *runtimes,
                  "also list this libonnxruntime (repeatable): its version and file, read by a child process that "
                  "loads it");
  cmd->callback([json_path, ep_libraries, ort_library, runtimes] {
    if (auto s = UseEpLibraries(*ep_libraries, *ort_library); !s) {
      ExitCode() = ReportError(s.error());
      return;
    }
    const Environment& e = CurrentEnvironment();
    if (!e.ep_error.empty()) {  // a library the user named (or PARITY_EP_LIBRARY) did not load
      ExitCode() = ReportError(Error(ErrorCode::kInvalidArgument, e.ep_error));
      return;
    }
    auto listed = Runtimes(*runtimes);
    if (!listed) {
      ExitCode() = ReportError(listed.error());
      return;
    }
    fmt::print("{}{}", FormatEnvironment(e), FormatRuntimes(*listed));
    if (!json_path->empty()) {
      nlohmann::json j = EnvReportToJson(e);
      if (!runtimes->empty()) j["env"]["runtimes"] = OrtFactsToJson(*listed);
      if (auto s = WriteJsonFile(*json_path, j); !s) {
        ExitCode() = ReportError(s.error());
        return;
      }
    }
    ExitCode() = 0;
  });
}

}  // namespace parity::cli
