#include "cli/command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ort/ep_libraries.h"
#include "ort/ort_library.h"
#include "report/text_escape.h"

namespace parity::cli {

int& ExitCode() {
  static int code = 0;
  return code;
}

int ReportError(const Error& error) {
  std::string message = error.message();
  // One line: a multi-line message from a library below is folded; names
  // from models are made safe for the terminal (no escape sequences).
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  message = TerminalSafe(message);
  if (error.code() == ErrorCode::kInternal)
    std::fprintf(stderr, "parity: internal error (this is a bug in parity): %s\n", message.c_str());
  else
    std::fprintf(stderr, "parity: error: %s\n", message.c_str());
  return error.ExitCode();
}

namespace {

CLI::Validator NumberValidator(bool strictly_positive) {
  return CLI::Validator(
      [strictly_positive](std::string& text) -> std::string {
        double v = 0;
        const bool ok = CLI::detail::lexical_cast(text, v) && std::isfinite(v);
        if (ok && (strictly_positive ? v > 0 : v >= 0)) return "";
        return fmt::format("expected a number {} 0, got '{}'", strictly_positive ? ">" : ">=", text);
      },
      strictly_positive ? "NUMBER>0" : "NUMBER>=0");
}

}  // namespace

const CLI::Validator& NonNegative() {
  static const CLI::Validator v = NumberValidator(false);
  return v;
}

const CLI::Validator& Positive() {
  static const CLI::Validator v = NumberValidator(true);
  return v;
}

void AddConfigOptions(CLI::App* app, ConfigOptions* o, const std::string& default_opt) {
  app->add_option("--config", o->config_file, "run config as a JSON file (flags given here override it)")
      ->check(CLI::ExistingFile);
  app->add_option("--opt", o->opt, "graph optimization level: disable, basic, extended, all (default " +
                                        default_opt + ")");
  app->add_option("--providers", o->providers, "execution providers in order: cpu, cuda, ...")->delimiter(',');
  app->add_option("--threads", o->threads, "intra-op threads (0: ORT's default)")->check(NonNegative());
  app->add_option("--inter-threads", o->inter_threads, "inter-op threads")->check(NonNegative());
  app->add_flag("--parallel", o->parallel, "ORT parallel execution mode");
  app->add_option("--disable-optimizer", o->disabled_optimizers,
                  "switch off an ORT optimizer by name (repeatable, or comma-separated)")
      ->delimiter(',');
  app->add_option("--session-config", o->session_entries, "any ORT session config entry KEY=VALUE");
  AddEpLibraryOption(app, &o->ep_libraries, &o->ort_library);
  app->add_option("--provider-option", o->provider_options,
                  "an execution provider's option EP:KEY=VALUE (repeatable), e.g. "
                  "openvino:load_config='{\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"f32\"}}'");
}

void AddEpLibraryOption(CLI::App* app, std::vector<std::string>* specs, std::string* ort_library) {
  app->add_option("--ep-library", *specs,
                  "register a plugin execution provider library NAME=PATH (repeatable; docs/providers.md)");
  app->add_option("--ort-library", *ort_library,
                  "the libonnxruntime to run (default: PARITY_ORT_LIBRARY, else the bundled one; docs/providers.md)");
}

Status UseEpLibraries(const std::vector<std::string>& specs, const std::string& ort_library) {
  if (!ort_library.empty()) PARITY_RETURN_IF_ERROR(ort::SelectOrtLibrary(ort_library, "--ort-library"));
  PARITY_RETURN_IF_ERROR(ort::LoadedOrtLibrary());
  for (const std::string& spec : specs) {
    PARITY_ASSIGN_OR_RETURN(ort::EpLibrary lib, ort::ParseEpLibrary(spec, "--ep-library"));
    ort::AddEpLibrary(std::move(lib));
  }
  // Now, not when a session first needs them: a library the user named that
  // cannot be loaded is a mistake in the command (exit 2), never a FAIL.
  const char* env = std::getenv("PARITY_EP_LIBRARY");
  if (!specs.empty() || (env != nullptr && *env != '\0')) PARITY_RETURN_IF_ERROR(ort::RegisterEpLibraries());
  return {};
}

// EP:KEY=VALUE into config.provider_options.
Status AddProviderOption(const std::string& spec, RunConfig& config) {
  const size_t colon = spec.find(':');
  const size_t eq = spec.find('=', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || colon == 0 || eq == std::string::npos || eq == colon + 1)
    return InvalidArgument(fmt::format("--provider-option '{}': expected EP:KEY=VALUE", spec));
  config.provider_options[spec.substr(0, colon)][spec.substr(colon + 1, eq - colon - 1)] = spec.substr(eq + 1);
  return {};
}

Result<RunConfig> ConfigFromLevelOrFile(const std::string& spec, std::string_view option, ConfigOrigin origin) {
  if (auto level = OptLevelFromName(spec)) {
    RunConfig c;
    c.opt_level = *level;
    return c;
  }
  return WithContext(LoadRunConfig(spec, origin), std::string(option));
}

Result<RunConfig> ResolveConfig(const ConfigOptions& o, const std::string& default_opt) {
  RunConfig config;
  if (!o.config_file.empty()) {
    PARITY_ASSIGN_OR_RETURN(config, LoadRunConfig(o.config_file, o.origin));
  } else {
    PARITY_ASSIGN_OR_RETURN(config.opt_level, OptLevelFromName(default_opt));
  }
  if (!o.opt.empty()) {
    PARITY_ASSIGN_OR_RETURN(config.opt_level, WithContext(OptLevelFromName(o.opt), "--opt"));
  }
  if (!o.providers.empty()) config.providers = o.providers;
  if (o.threads >= 0) config.intra_op_threads = o.threads;
  if (o.inter_threads >= 0) config.inter_op_threads = o.inter_threads;
  if (o.parallel) config.parallel_execution = true;
  for (const auto& name : o.disabled_optimizers) config.disabled_optimizers.push_back(name);
  for (const auto& entry : o.session_entries) {
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument(fmt::format("--session-config '{}': expected KEY=VALUE", entry));
    config.session_entries[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& spec : o.provider_options) PARITY_RETURN_IF_ERROR(AddProviderOption(spec, config));
  for (const auto& [name, values] : config.provider_options)
    if (std::find(config.providers.begin(), config.providers.end(), name) == config.providers.end())
      return InvalidArgument(fmt::format("--provider-option: options for '{}', which is not among the providers ({}); "
                                         "add --providers {}",
                                         name, fmt::join(config.providers, ","), name));
  // A config's "ort_library" is the process's runtime unless --ort-library says otherwise.
  PARITY_RETURN_IF_ERROR(UseEpLibraries(o.ep_libraries, !o.ort_library.empty() ? o.ort_library : config.ort_library));
  return config;
}

}  // namespace parity::cli
