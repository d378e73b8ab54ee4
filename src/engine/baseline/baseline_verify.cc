// `parity baseline verify`: file integrity against the manifest, and with a
// model, a re-run compared at the comparison engine's default tolerance.
#include <cmath>
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include <fmt/format.h>

#include "compare/judge.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/json_out.h"
#include "core/npy.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "engine/baseline/baseline.h"
#include "engine/baseline/baseline_internal.h"
#include "engine/run/flatten_control_flow.h"
#include "engine/run/environment.h"
#include "engine/run/environment_json.h"
#include "engine/run/trace.h"
#include "onnx/graph.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

// Whether `path` (canonical) lies inside `dir` (canonical).
bool IsInside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

using baseline_internal::ManifestSample;

Result<baseline_internal::ParsedManifest> ReadManifest(const fs::path& dir) {
  const fs::path path = dir / "manifest.json";
  auto text = ReadRegularFile(path, kMaxManifestBytes);
  if (!text && text.error().code() == ErrorCode::kNotFound)
    return NotFound(fmt::format("{}: no baseline manifest (is this a baseline directory?)", path.string()));
  if (!text) return std::unexpected(text.error());
  return baseline_internal::ParseManifest(*text, path.string());
}

// Checks one file; returns the tensor when it is intact, else adds a finding.
std::optional<Tensor> CheckFile(const fs::path& dir, const BaselineFile& f, std::vector<VerifyFinding>& findings) {
  const fs::path path = dir / f.file;
  std::error_code ec;
  auto add = [&](VerifyFindingKind kind, std::string message) {
    findings.push_back({f.file, kind, fmt::format("{}: {}", f.file, message), true});
    return std::nullopt;
  };
  if (!fs::is_regular_file(path, ec)) return add(VerifyFindingKind::kMissing, "missing");
  // A symlink that leads out of the baseline directory is not read (docs/security.md).
  const fs::path real = fs::canonical(path, ec);
  const fs::path real_dir = fs::canonical(dir, ec);
  if (ec || !IsInside(real, real_dir)) return add(VerifyFindingKind::kOutside, "resolves to a file outside the baseline directory");
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) return add(VerifyFindingKind::kUnreadable, ec.message());
  if (size != f.bytes)
    return add(VerifyFindingKind::kSize, fmt::format("{} bytes, manifest says {} ({})", size, f.bytes,
                                   size < f.bytes ? "truncated" : "grown"));
  auto sha = Sha256FileHex(path);
  if (!sha) return add(VerifyFindingKind::kUnreadable, sha.error().message());
  if (*sha != f.sha256) return add(VerifyFindingKind::kSha256, fmt::format("sha256 {} differs from the manifest's {}", *sha, f.sha256));
  auto t = ReadNpy(path);
  if (!t) return add(VerifyFindingKind::kUnreadable, t.error().message());
  if (DTypeName(t->dtype()) != f.dtype)
    return add(VerifyFindingKind::kDtype, fmt::format("dtype {}, manifest says {}", DTypeName(t->dtype()), f.dtype));
  if (t->shape() != f.shape)
    return add(VerifyFindingKind::kShape, fmt::format("shape {}, manifest says {}", ShapeToString(t->shape()), ShapeToString(f.shape)));
  return std::move(*t);
}

void CompareEnvironment(const nlohmann::json& manifest, std::vector<EnvironmentChange>& changes) {
  const nlohmann::json recorded = manifest.value("env", nlohmann::json::object());  // an object (ReadManifest)
  const nlohmann::json now = EnvironmentToJson(CurrentEnvironment());
  for (const char* field : {"ort_version", "parity_version", "onnx_version", "compiler", "cpu", "os", "hostname"}) {
    const std::string a = recorded.contains(field) ? ToJsonText(recorded[field]) : "null";
    const std::string b = now.contains(field) ? ToJsonText(now[field]) : "null";
    if (a == b) continue;
    auto text = [](const nlohmann::json& j, const char* key) {
      if (!j.contains(key)) return std::string("(not recorded)");
      return j[key].is_string() ? j[key].get<std::string>() : ToJsonText(j[key]);
    };
    changes.push_back({field, text(recorded, field), text(now, field)});
  }
}

// What a re-run of every sample shares: the model, its recorded config and
// the files the integrity check refused.
struct RerunContext {
  const fs::path& dir;
  const fs::path& model_path;
  const Model& model;
  const GraphView& graph;
  const RunConfig& config;
  int64_t budget = 0;
  // A file the integrity check refused (missing, changed, a symlink out of
  // the folder) is not read again.
  std::set<std::string> refused;
  TolerancePolicy policy;  // the comparison engine's defaults
};

// The model's checksum and the environment against the manifest's; returns
// the recorded config.
Result<RunConfig> RecordedConfig(const fs::path& dir, const fs::path& model_path, const nlohmann::json& manifest,
                                 VerifyResult& r) {
  PARITY_ASSIGN_OR_RETURN(std::string sha, Sha256FileHex(model_path));
  const std::string recorded_sha = manifest.value("model", nlohmann::json::object()).value("sha256", "");
  if (sha != recorded_sha) r.changes.push_back({"model_sha256", recorded_sha, sha});
  CompareEnvironment(manifest, r.changes);
  return WithContext(RunConfigFromJson(manifest.value("config", nlohmann::json::object()), ConfigOrigin::kStored),
                     (dir / "manifest.json").string() + ": config");
}

// One recorded sample as the re-run needs it: its inputs read back, the
// layers to observe, and the file of each recorded tensor.
struct RerunSample {
  Sample sample;
  std::vector<std::string> observed;
  std::unordered_map<std::string, const BaselineFile*> by_tensor;
  bool inputs_ok = true;  // false: an input file was refused or unreadable
};

RerunSample PlanSample(const RerunContext& ctx, const ManifestSample& ms, VerifyResult& r) {
  RerunSample out{.sample = {ms.name, {}}};
  for (const auto& f : ms.files) {
    if (f.role == FileRole::kInput) {
      if (ctx.refused.contains(f.file)) {
        out.inputs_ok = false;
        continue;
      }
      auto t = ReadNpy(ctx.dir / f.file);
      if (!t) out.inputs_ok = false;
      else if (auto s = out.sample.tensors.Add(f.tensor, std::move(*t)); !s) out.inputs_ok = false;
      continue;
    }
    if (f.role == FileRole::kLayer && !ctx.graph.producer.contains(f.tensor)) {
      r.findings.push_back({f.file, VerifyFindingKind::kAbsentInModel,
                            fmt::format("{}: tensor '{}' is not in the model", f.file, f.tensor), true});
      continue;
    }
    out.by_tensor[f.tensor] = &f;
    if (f.role == FileRole::kLayer) out.observed.push_back(f.tensor);
  }
  return out;
}

// The re-computed `test` against the baseline's `ref` of file `f`.
Result<TensorComparison> CompareWithBaseline(const BaselineFile& f, const std::string& name, const Tensor& ref,
                                             const Tensor& test, const TolerancePolicy& policy) {
  TensorComparison c;
  c.name = f.file;
  c.test_name = name;
  if (ref.shape() != test.shape() || ref.dtype() != test.dtype()) {
    c.status = Verdict::kFail;
    c.score = HUGE_VAL;  // as JudgeTensor scores a shape or dtype that differs
    c.reason = fmt::format("now {} {}, baseline {} {}", DTypeName(test.dtype()), ShapeToString(test.shape()),
                           DTypeName(ref.dtype()), ShapeToString(ref.shape()));
    return c;
  }
  PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, test, policy));
  TakeJudgment(c, std::move(j));
  return c;
}

// Runs one sample with its recorded layers observed and compares each tensor
// with its file.
Status RerunGraph(const RerunContext& ctx, const ManifestSample& ms, VerifyResult& r) {
  RerunSample plan = PlanSample(ctx, ms, r);
  if (!plan.inputs_ok) return {};  // the integrity check already named the input file
  int64_t input_bytes = 0;
  TraceOptions options{.graph = &ctx.graph};
  for (const auto& t : plan.sample.tensors) {
    input_bytes += static_cast<int64_t>(t.tensor.byte_size());
    options.input_shapes[t.name] = t.tensor.shape();
  }
  options.max_batch_bytes = std::max<int64_t>(1, (ctx.budget - input_bytes) / 4);
  PARITY_ASSIGN_OR_RETURN(Tracer tracer,
                          Tracer::Create(ctx.model, ctx.config, plan.observed, ctx.model_path.string(), options));
  std::set<std::string> produced;
  auto sink = [&](const std::string& name, const Tensor& test) -> Status {
    auto it = plan.by_tensor.find(name);
    if (it == plan.by_tensor.end()) return {};  // a model output the baseline lacks
    const BaselineFile& f = *it->second;
    produced.insert(name);
    if (ctx.refused.contains(f.file)) return {};  // already a finding
    auto ref = ReadNpy(ctx.dir / f.file);
    if (!ref) return {};  // already a finding
    PARITY_ASSIGN_OR_RETURN(TensorComparison c, CompareWithBaseline(f, name, *ref, test, ctx.policy));
    if (c.status == Verdict::kFail)
      r.findings.push_back({f.file, VerifyFindingKind::kNumeric,
                            fmt::format("{} ('{}'): {}", f.file, name, c.reason), true});
    r.comparisons.push_back(std::move(c));
    return {};
  };
  PARITY_RETURN_IF_ERROR(tracer.Trace(plan.sample, sink));
  // Every recorded tensor must have been compared: a model that produces
  // none of them (another model) must not pass by comparing nothing.
  for (const auto& f : ms.files) {
    if (f.role == FileRole::kInput || produced.contains(f.tensor) || !plan.by_tensor.contains(f.tensor)) continue;
    r.findings.push_back({f.file, VerifyFindingKind::kNotCompared,
                          fmt::format("{}: the model did not produce tensor '{}'", f.file, f.tensor), true});
  }
  return {};
}

// A model with If/Loop/Scan: the recorded layers are those of the sample's
// observation copy (engine/run/flatten_control_flow.h), made again from the
// recorded inputs.
Status RerunOne(const RerunContext& ctx, const ManifestSample& ms, VerifyResult& r) {
  if (!HasControlFlow(ctx.model)) return RerunGraph(ctx, ms, r);
  Sample sample{ms.name, {}};
  for (const auto& f : ms.files) {
    if (f.role != FileRole::kInput) continue;
    if (ctx.refused.contains(f.file)) return {};  // the integrity check already named the input file
    auto t = ReadNpy(ctx.dir / f.file);
    if (!t || !sample.tensors.Add(f.tensor, std::move(*t))) return {};
  }
  PARITY_ASSIGN_OR_RETURN(FlatModel flat,
                          FlattenForSample(ctx.model, sample, ctx.model_path.string(), {.probe = ctx.config}));
  PARITY_ASSIGN_OR_RETURN(GraphView graph, WithContext(BuildGraphView(flat.model), ctx.model_path.string()));
  RerunContext one{.dir = ctx.dir, .model_path = ctx.model_path, .model = flat.model, .graph = graph,
                   .config = ctx.config, .budget = ctx.budget, .refused = ctx.refused, .policy = ctx.policy};
  return RerunGraph(one, ms, r);
}

Status Rerun(const fs::path& dir, const fs::path& model_path, const nlohmann::json& manifest,
             const std::vector<ManifestSample>& samples, int64_t max_memory, VerifyResult& r) {
  PARITY_ASSIGN_OR_RETURN(RunConfig config, RecordedConfig(dir, model_path, manifest, r));
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(model_path));
  PARITY_ASSIGN_OR_RETURN(GraphView graph, WithContext(BuildGraphView(model), model_path.string()));
  r.model_checked = true;
  RerunContext ctx{.dir = dir, .model_path = model_path, .model = model, .graph = graph, .config = config};
  ctx.budget = max_memory > 0 ? max_memory : DefaultBaselineMemory();
  for (const auto& f : r.findings)
    if (f.fatal) ctx.refused.insert(f.file);
  for (const ManifestSample& ms : samples) PARITY_RETURN_IF_ERROR(RerunOne(ctx, ms, r));
  return {};
}

}  // namespace

bool VerifyResult::passed() const {
  return std::none_of(findings.begin(), findings.end(), [](const auto& f) { return f.fatal; });
}

Result<VerifyResult> VerifyBaseline(const fs::path& dir, const fs::path& model_path, int64_t max_memory_bytes) {
  PARITY_ASSIGN_OR_RETURN(baseline_internal::ParsedManifest parsed, ReadManifest(dir));
  const nlohmann::json& manifest = parsed.json;
  std::vector<ManifestSample>& samples = parsed.samples;
  VerifyResult r;
  std::set<std::string> listed;
  for (const ManifestSample& s : samples) {
    for (const BaselineFile& f : s.files) {
      ++r.files_checked;
      listed.insert(f.file);
      CheckFile(dir, f, r.findings);
    }
  }
  // Files the manifest does not know: reported, not fatal (a user's notes, a stray copy).
  // Error codes throughout: a symlink loop or an unreadable folder ends the
  // walk instead of throwing.
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec) || it->path().extension() != ".npy") continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (!listed.contains(rel))
      r.findings.push_back({rel, VerifyFindingKind::kExtra, fmt::format("{}: not in the manifest", rel), false});
  }
  if (!model_path.empty()) PARITY_RETURN_IF_ERROR(Rerun(dir, model_path, manifest, samples, max_memory_bytes, r));
  return r;
}

}  // namespace parity
