// parity env: versions, execution providers, CPU, OS.
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "cli/output.h"
#include "engine/run/environment.h"
#include "report/env_json.h"
#include "report/json_out.h"

namespace parity::cli {

void RegisterEnv(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "versions (parity, ONNX Runtime, ONNX, compiler), execution providers, CPU, OS");
  auto json_path = std::make_shared<std::string>();
  cmd->add_option("--json", *json_path, "also write the facts as JSON to FILE");
  cmd->callback([json_path] {
    const Environment& e = CurrentEnvironment();
    fmt::print("parity        {}\n", e.parity_version);
    fmt::print("onnxruntime   {}\n", e.ort_version);
    fmt::print("onnx          {}\n", e.onnx_version);
    fmt::print("compiler      {}\n", e.compiler);
    fmt::print("providers     {}\n", fmt::join(e.providers, ", "));
    fmt::print("cpu           {} ({} threads)\n", e.cpu, e.cpu_count);
    fmt::print("memory        {:.1f} GiB\n", static_cast<double>(e.memory_bytes) / (1 << 30));
    fmt::print("os            {}\n", e.os);
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
