// The ORT optimizers to switch off (or the level to use) so that the
// deployed config agrees with the reference config (fix.h).
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/json_out.h"
#include "core/run_config.h"
#include "core/shell_word.h"
#include "engine/fix/fix_internal.h"

namespace parity::fix_internal {
namespace {

void AddUnique(std::vector<std::string>& names, const std::string& n) {
  if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
}

// `parity check MODEL` with the check's flags and `extra`; a flag `extra`
// sets again (--opt) is left out of the check's (it takes one value).
std::string CheckCommand(const FixOptions& o, const std::string& model, const std::vector<std::string>& extra) {
  std::string cmd = "parity check " + ShellWord(model);
  const bool new_level = !extra.empty() && extra.front() == "--opt";
  for (size_t i = 0; i < o.check_args.size(); ++i) {
    if (new_level && o.check_args[i] == "--opt") { ++i; continue; }
    cmd += " " + ShellWord(o.check_args[i]);
  }
  for (const auto& a : extra) cmd += " " + ShellWord(a);
  return cmd;
}

// The levels below the deployed one, highest first (each a probe).
Result<std::optional<OptLevel>> TryLevels(const FixOptions& o, FixResult& result) {
  const OptLevel deployed = o.check.target.opt_level;
  for (OptLevel level : {OptLevel::kExtended, OptLevel::kBasic, OptLevel::kDisable}) {
    if (static_cast<int>(level) >= static_cast<int>(deployed)) continue;
    if (static_cast<int>(result.search.probes.size()) >= o.budget_runs) {
      result.search.budget_spent = true;
      break;
    }
    CheckOptions probe = ProbeOptions(o.check);
    probe.target.opt_level = level;
    probe.target.disabled_optimizers.clear();
    const auto start = std::chrono::steady_clock::now();
    PARITY_ASSIGN_OR_RETURN(CheckReport r, RunCheck(probe));
    result.search.probes.push_back(
        {.phase = "level", .change = {std::string(OptLevelName(level))}, .passed = Passed(r),
         .seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    if (o.on_probe) o.on_probe(result.search.probes.back());
    if (Passed(r)) return std::optional<OptLevel>(level);
  }
  return std::optional<OptLevel>();
}

}  // namespace

Result<std::optional<Found>> FixOptimizers(const FixOptions& o, const CheckReport& base, FixResult& result) {
  result.kind = "optimizers";
  std::vector<std::string> all;
  if (base.locate)
    for (const auto& c : base.locate->culprits) {
      if (!c.ablation) continue;
      AddUnique(result.seeds, c.ablation->optimizer);
      for (const auto& a : c.ablation->also_removing) AddUnique(result.seeds, a);
      for (const auto& t : c.ablation->tried) AddUnique(all, t);
    }
  for (const auto& s : result.seeds) AddUnique(all, s);
  const Probe probe = [&](const std::vector<std::string>& change, std::string*) -> Result<bool> {
    CheckOptions p = ProbeOptions(o.check);
    for (const auto& n : change) AddUnique(p.target.disabled_optimizers, n);
    PARITY_ASSIGN_OR_RETURN(CheckReport r, RunCheck(p));
    return Passed(r);
  };
  if (!all.empty()) {
    PARITY_ASSIGN_OR_RETURN(result.search,
                            SearchSmallestChange({.seeds = result.seeds, .all = all, .budget = o.budget_runs, .on_probe = o.on_probe}, probe));
  }
  Found found{.verified = o.check, .fixed_path = o.check.model_path};
  std::vector<std::string> flags;
  if (result.search.found) {
    result.change = *result.search.found;
    for (const auto& n : result.change) {
      AddUnique(found.verified.target.disabled_optimizers, n);
      flags.insert(flags.end(), {"--disable-optimizer", n});
    }
  } else {
    // No set of the optimizers that made the culprits passes: a lower level.
    PARITY_ASSIGN_OR_RETURN(auto level, TryLevels(o, result));
    if (!level) {
      result.note = all.empty() ? "the localization named no optimizer, and no lower level passes"
                                : fmt::format("switching off {} optimizer(s) did not pass, nor did a lower level",
                                              all.size());
      return std::optional<Found>();
    }
    result.kind = "level";
    result.level = std::string(OptLevelName(*level));
    found.verified.target.opt_level = *level;
    found.verified.target.disabled_optimizers.clear();
    flags = {"--opt", result.level};
  }
  const auto config = FreshPath(o.out_dir, "fix_config", ".json");
  PARITY_RETURN_IF_ERROR(WriteJsonFile(config, RunConfigToJson(found.verified.target)));
  result.written = config.string();
  result.command = CheckCommand(o, o.check.model_path, flags);
  return std::optional<Found>(std::move(found));
}

// An EP's precision options, one at a time: the EP computes in a lower
// precision than the CPU EP by default (TF32 on CUDA's Ampere+ GPUs,
// OpenVINO's bf16/f16 inference precision hint on CPU/GPU (docs/providers.md), TensorRT's fp16).
Result<std::optional<Found>> FixEpOptions(const FixOptions& o, const CheckReport&, FixResult& result) {
  result.kind = "ep_options";
  const std::string ep = o.check.target.providers.front();
  static const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kOptions = {
      {"cuda", {"use_tf32", "0"}},
      {"openvino", {"load_config", R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"}},
      {"openvino", {"load_config", R"({"GPU":{"INFERENCE_PRECISION_HINT":"f32"}})"}},
      {"tensorrt", {"trt_fp16_enable", "0"}},
      {"tensorrt", {"trt_int8_enable", "0"}},
  };
  std::vector<std::string> all;
  for (const auto& [name, kv] : kOptions)
    if (name == ep) all.push_back(fmt::format("{}:{}={}", name, kv.first, kv.second));
  if (all.empty()) {
    result.note = fmt::format("parity knows no precision option of the {} EP to try", ep);
    return std::optional<Found>();
  }
  auto apply = [&](RunConfig& config, const std::vector<std::string>& change) {
    for (const auto& c : change) {
      const auto colon = c.find(':'), eq = c.find('=');
      config.provider_options[c.substr(0, colon)][c.substr(colon + 1, eq - colon - 1)] = c.substr(eq + 1);
    }
  };
  result.seeds = all;
  const Probe probe = [&](const std::vector<std::string>& change, std::string*) -> Result<bool> {
    CheckOptions p = ProbeOptions(o.check);
    apply(p.target, change);
    PARITY_ASSIGN_OR_RETURN(CheckReport r, RunCheck(p));
    return Passed(r);
  };
  PARITY_ASSIGN_OR_RETURN(result.search,
                          SearchSmallestChange({.seeds = all, .all = all, .budget = o.budget_runs, .on_probe = o.on_probe}, probe));
  if (!result.search.found) return std::optional<Found>();
  result.change = *result.search.found;
  Found found{.verified = o.check, .fixed_path = o.check.model_path};
  apply(found.verified.target, result.change);
  std::vector<std::string> flags;
  for (const auto& c : result.change) flags.insert(flags.end(), {"--provider-option", c});
  const auto config = FreshPath(o.out_dir, "fix_config", ".json");
  PARITY_RETURN_IF_ERROR(WriteJsonFile(config, RunConfigToJson(found.verified.target)));
  result.written = config.string();
  result.command = CheckCommand(o, o.check.model_path, flags);
  return std::optional<Found>(std::move(found));
}

}  // namespace parity::fix_internal
