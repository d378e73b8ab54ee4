// `parity baseline verify`: file integrity against the manifest, and with a
// model, a re-run compared at the comparison engine's default tolerance.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include <fmt/format.h>

#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/npy.h"
#include "core/sha256.h"
#include "engine/baseline.h"
#include "engine/baseline_internal.h"
#include "engine/environment.h"
#include "engine/trace.h"
#include "onnx/graph.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

struct ManifestSample {
  std::string name;
  std::vector<BaselineFile> files;
};

Result<nlohmann::json> ReadManifest(const fs::path& dir) {
  const fs::path path = dir / "manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: no baseline manifest (is this a baseline directory?)", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt(fmt::format("{}: not valid JSON", path.string()));
  if (!j.is_object() || j.value("schema", "") != kBaselineSchema)
    return InvalidArgument(fmt::format("{}: not a baseline manifest (schema is not {})", path.string(), kBaselineSchema));
  if (!j.contains("samples") || !j["samples"].is_array())
    return Corrupt(fmt::format("{}: 'samples' is missing or not a list", path.string()));
  return j;
}

// Checks one file; returns the tensor when it is intact, else adds a finding.
std::optional<Tensor> CheckFile(const fs::path& dir, const BaselineFile& f, std::vector<VerifyFinding>& findings) {
  const fs::path path = dir / f.file;
  std::error_code ec;
  auto add = [&](std::string kind, std::string message) {
    findings.push_back({f.file, std::move(kind), fmt::format("{}: {}", f.file, message), true});
    return std::nullopt;
  };
  if (!fs::is_regular_file(path, ec)) return add("missing", "missing");
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) return add("unreadable", ec.message());
  if (size != f.bytes)
    return add("size", fmt::format("{} bytes, manifest says {} ({})", size, f.bytes,
                                   size < f.bytes ? "truncated" : "grown"));
  auto sha = Sha256FileHex(path);
  if (!sha) return add("unreadable", sha.error().message());
  if (*sha != f.sha256) return add("sha256", fmt::format("sha256 {} differs from the manifest's {}", *sha, f.sha256));
  auto t = ReadNpy(path);
  if (!t) return add("unreadable", t.error().message());
  if (DTypeName(t->dtype()) != f.dtype)
    return add("dtype", fmt::format("dtype {}, manifest says {}", DTypeName(t->dtype()), f.dtype));
  if (t->shape() != f.shape)
    return add("shape", fmt::format("shape {}, manifest says {}", ShapeToString(t->shape()), ShapeToString(f.shape)));
  return std::move(*t);
}

void CompareEnvironment(const nlohmann::json& manifest, std::vector<EnvironmentChange>& changes) {
  const nlohmann::json recorded = manifest.value("env", nlohmann::json::object());
  const nlohmann::json now = EnvironmentToJson(CurrentEnvironment());
  for (const char* field : {"ort_version", "parity_version", "onnx_version", "compiler", "cpu", "os", "hostname"}) {
    const std::string a = recorded.contains(field) ? recorded[field].dump() : "null";
    const std::string b = now.contains(field) ? now[field].dump() : "null";
    if (a != b) changes.push_back({field, recorded.value(field, std::string("(not recorded)")), now.value(field, "")});
  }
}

Status Rerun(const fs::path& dir, const fs::path& model_path, const nlohmann::json& manifest,
             const std::vector<ManifestSample>& samples, int64_t max_memory, VerifyResult& r) {
  PARITY_ASSIGN_OR_RETURN(std::string sha, Sha256FileHex(model_path));
  const std::string recorded_sha = manifest.value("model", nlohmann::json::object()).value("sha256", "");
  if (sha != recorded_sha) r.changes.push_back({"model_sha256", recorded_sha, sha});
  CompareEnvironment(manifest, r.changes);
  PARITY_ASSIGN_OR_RETURN(RunConfig config,
                          WithContext(RunConfigFromJson(manifest.value("config", nlohmann::json::object())),
                                      (dir / "manifest.json").string() + ": config"));
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(model_path));
  PARITY_ASSIGN_OR_RETURN(GraphView graph, WithContext(BuildGraphView(model), model_path.string()));
  r.model_checked = true;

  const TolerancePolicy policy;  // the comparison engine's defaults
  const int64_t budget = max_memory > 0 ? max_memory : DefaultBaselineMemory();
  for (const ManifestSample& ms : samples) {
    Sample sample{ms.name, {}};
    std::vector<std::string> observed;
    std::unordered_map<std::string, const BaselineFile*> by_tensor;
    bool inputs_ok = true;
    for (const auto& f : ms.files) {
      if (f.role == "input") {
        auto t = ReadNpy(dir / f.file);
        if (!t) inputs_ok = false;
        else if (auto s = sample.tensors.Add(f.tensor, std::move(*t)); !s) inputs_ok = false;
        continue;
      }
      if (f.role == "layer" && !graph.producer.contains(f.tensor)) {
        r.findings.push_back({f.file, "absent_in_model",
                              fmt::format("{}: tensor '{}' is not in the model", f.file, f.tensor), true});
        continue;
      }
      by_tensor[f.tensor] = &f;
      if (f.role == "layer") observed.push_back(f.tensor);
    }
    if (!inputs_ok) continue;  // the integrity check already named the input file
    int64_t input_bytes = 0;
    TraceOptions options;
    for (const auto& t : sample.tensors) {
      input_bytes += static_cast<int64_t>(t.tensor.byte_size());
      options.input_shapes[t.name] = t.tensor.shape();
    }
    options.max_batch_bytes = std::max<int64_t>(1, (budget - input_bytes) / 4);
    PARITY_ASSIGN_OR_RETURN(Tracer tracer, Tracer::Create(model, config, observed, model_path.string(), options));
    auto sink = [&](const std::string& name, const Tensor& test) -> Status {
      auto it = by_tensor.find(name);
      if (it == by_tensor.end()) return {};  // a model output the baseline lacks
      const BaselineFile& f = *it->second;
      auto ref = ReadNpy(dir / f.file);
      if (!ref) return {};  // already a finding
      TensorComparison c;
      c.name = f.file;
      c.test_name = name;
      if (ref->shape() != test.shape() || ref->dtype() != test.dtype()) {
        c.status = Verdict::kFail;
        c.reason = fmt::format("now {} {}, baseline {} {}", DTypeName(test.dtype()), ShapeToString(test.shape()),
                               DTypeName(ref->dtype()), ShapeToString(ref->shape()));
      } else {
        c.tolerance = Resolve(name, *ref, policy);
        auto m = ComputeMetrics(*ref, test, {.atol = c.tolerance.tolerance.atol, .rtol = c.tolerance.tolerance.rtol});
        if (!m) return std::unexpected(m.error());
        c.metrics = *m;
        c.reason = Judge(c.metrics, c.tolerance.tolerance);
        c.status = c.reason.empty() ? Verdict::kPass : Verdict::kFail;
      }
      if (c.status == Verdict::kFail)
        r.findings.push_back({f.file, "numeric", fmt::format("{} ('{}'): {}", f.file, name, c.reason), true});
      r.comparisons.push_back(std::move(c));
      return {};
    };
    PARITY_RETURN_IF_ERROR(tracer.Trace(sample, sink));
  }
  return {};
}

}  // namespace

bool VerifyResult::passed() const {
  return std::none_of(findings.begin(), findings.end(), [](const auto& f) { return f.fatal; });
}

Result<VerifyResult> VerifyBaseline(const fs::path& dir, const fs::path& model_path, int64_t max_memory_bytes) {
  PARITY_ASSIGN_OR_RETURN(nlohmann::json manifest, ReadManifest(dir));
  VerifyResult r;
  std::vector<ManifestSample> samples;
  std::set<std::string> listed;
  for (const auto& js : manifest["samples"]) {
    ManifestSample s;
    s.name = js.is_object() ? js.value("name", "") : "";
    if (!js.is_object() || !js.contains("files") || !js["files"].is_array())
      return Corrupt(fmt::format("{}: sample '{}' has no file list", (dir / "manifest.json").string(), s.name));
    for (const auto& jf : js["files"]) {
      PARITY_ASSIGN_OR_RETURN(BaselineFile f,
                              WithContext(baseline_internal::FileFromJson(jf), (dir / "manifest.json").string()));
      ++r.files_checked;
      listed.insert(f.file);
      CheckFile(dir, f, r.findings);
      s.files.push_back(std::move(f));
    }
    samples.push_back(std::move(s));
  }
  // Files the manifest does not know: reported, not fatal (a user's notes, a stray copy).
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".npy") continue;
    const std::string rel = fs::relative(entry.path(), dir, ec).generic_string();
    if (!listed.contains(rel))
      r.findings.push_back({rel, "extra", fmt::format("{}: not in the manifest", rel), false});
  }
  if (!model_path.empty()) PARITY_RETURN_IF_ERROR(Rerun(dir, model_path, manifest, samples, max_memory_bytes, r));
  return r;
}

nlohmann::json VerifyResultToJson(const VerifyResult& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"file", f.file}, {"kind", f.kind}, {"message", f.message}, {"fatal", f.fatal}});
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : r.changes) changes.push_back({{"field", c.field}, {"recorded", c.recorded}, {"now", c.now}});
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& c : r.comparisons) {
    nlohmann::json t = {{"file", c.name}, {"tensor", c.test_name}, {"status", VerdictName(c.status)}};
    if (!c.reason.empty()) t["reason"] = c.reason;
    if (c.status != Verdict::kUnchecked) {
      t["max_abs"] = c.metrics.max_abs;
      t["mismatches"] = c.metrics.mismatches;
      t["atol"] = c.tolerance.tolerance.atol;
      t["rtol"] = c.tolerance.tolerance.rtol;
    }
    tensors.push_back(std::move(t));
  }
  return {{"schema", "parity.baseline_verify/1"},
          {"overall_status", r.passed() ? "PASS" : "FAIL"},
          {"files_checked", r.files_checked},
          {"model_checked", r.model_checked},
          {"findings", findings},
          {"environment_changes", changes},
          {"tensors", tensors},
          {"env", EnvironmentToJson(CurrentEnvironment())}};
}

}  // namespace parity
