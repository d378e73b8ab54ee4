// The command line's plumbing: each subcommand lives in its own cmd_<name>.cc
// with an options struct and a Register<Name>() that attaches it to the app.
// A subcommand's callback stores its exit code; main() returns it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"

namespace parity::cli {

// The exit code the selected subcommand produced (docs/contract.md: 0 pass, 1 check
// failed, 2 bad input, 3 runtime failure).
int& ExitCode();

// Prints one line "parity: error: <message>" to stderr and returns the exit
// code of the error's class.
int ReportError(const Error& error);

// Number validators with a readable message ("--atol: expected a number >= 0,
// got '-1'"); CLI11's Range prints its bounds to 300 digits.
const CLI::Validator& NonNegative();
const CLI::Validator& Positive();

// The shared config option group (docs/contract.md (""config"")): --config FILE, --opt,
// --providers, --threads, --inter-threads, --parallel, --disable-optimizer,
// --session-config KEY=VALUE, --ep-library NAME=PATH, --provider-option
// EP:KEY=VALUE, --ort-library PATH. Call ResolveConfig after parsing.
struct ConfigOptions {
  std::string config_file;
  std::string opt;
  std::vector<std::string> providers;
  int threads = -1;
  int inter_threads = -1;
  bool parallel = false;
  std::vector<std::string> disabled_optimizers;
  std::vector<std::string> session_entries;
  std::vector<std::string> ep_libraries;      // --ep-library NAME=PATH
  std::vector<std::string> provider_options;  // --provider-option EP:KEY=VALUE
  std::string ort_library;                    // --ort-library PATH
  // kStored for a config file that travels with a repro (locate --target):
  // it may not name files to write (docs/security.md).
  ConfigOrigin origin = ConfigOrigin::kUser;
};
void AddConfigOptions(CLI::App* app, ConfigOptions* options, const std::string& default_opt);
// The config file first, then each flag given on the command line on top.
Result<RunConfig> ResolveConfig(const ConfigOptions& options, const std::string& default_opt);

// --ep-library NAME=PATH (repeatable) and --ort-library PATH on a command
// that runs no config of its own options group (env, bench); AddConfigOptions
// adds them too.
void AddEpLibraryOption(CLI::App* app, std::vector<std::string>* specs, std::string* ort_library);
// Loads the ORT (--ort-library PATH when given, else PARITY_ORT_LIBRARY's,
// else the bundled one: ort/ort_library.h), so that a file that is no usable
// ORT is refused (exit 2) before anything runs; then hands each NAME=PATH to
// the ORT adapter (registered on first need).
Status UseEpLibraries(const std::vector<std::string>& specs, const std::string& ort_library);

// --provider-option EP:KEY=VALUE into config.provider_options.
Status AddProviderOption(const std::string& spec, RunConfig& config);

// A config given as one value: a level name (disable, basic, extended, all)
// or a JSON file (docs/config.md). Errors name `option`.
Result<RunConfig> ConfigFromLevelOrFile(const std::string& spec, std::string_view option,
                                        ConfigOrigin origin = ConfigOrigin::kUser);

// The shared tolerance option group: --atol, --rtol, --tolerance FILE.json,
// --tol 'PATTERN:atol=..,rtol=..,by=max|mean|quantile,q=..,mode=..'
// (repeatable), --mode fixed|adaptive|calibrated, --by, --quantile.
struct ToleranceOptions {
  double atol = -1;
  double rtol = -1;
  std::string file;
  std::vector<std::string> rules;
  std::string mode;
  std::string by;
  double quantile = -1;
  bool quantized = false;
};
void AddToleranceOptions(CLI::App* app, ToleranceOptions* options);
// The file first, then each flag given on the command line on top.
Result<TolerancePolicy> ResolveTolerance(const ToleranceOptions& options);

void RegisterEnv(CLI::App& app);
void RegisterInspect(CLI::App& app);
void RegisterRun(CLI::App& app);
void RegisterBaseline(CLI::App& app);
void RegisterCompare(CLI::App& app);
void RegisterDemo(CLI::App& app);
void RegisterView(CLI::App& app);
void RegisterCheck(CLI::App& app);
void RegisterAlign(CLI::App& app);
void RegisterInputs(CLI::App& app);
void RegisterBench(CLI::App& app);
void RegisterLocate(CLI::App& app);
void RegisterRunnerWorker(CLI::App& app);  // hidden: cmd_runner_worker.cc

}  // namespace parity::cli
