// Small pieces of the baseline: file names, statistics, memory sizes, and the
// manifest's JSON form of one file record.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "engine/baseline/baseline.h"

#include "core/json_in.h"
#include "engine/baseline/baseline_internal.h"

namespace parity {

std::string SanitizeFileName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  // A name of dots only would be "." or ".." as a directory name.
  if (out.empty() || std::all_of(out.begin(), out.end(), [](char c) { return c == '.'; })) out = "_" + out;
  return out;
}

int64_t DefaultBaselineMemory() {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return std::min<int64_t>(int64_t{4} << 30, physical > 0 ? physical / 4 : int64_t{1} << 30);
}

int64_t DefaultBaselineMemory(int64_t weight_bytes) {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  const int64_t wanted = 2 * std::max<int64_t>(weight_bytes, 0) + (int64_t{1} << 30);
  const int64_t ceiling = physical > 0 ? physical / 4 * 3 : wanted;
  return std::max(DefaultBaselineMemory(), std::min(wanted, ceiling));
}

Result<int64_t> ParseMemorySize(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string suffix(end, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value))
    return InvalidArgument(fmt::format("'{}': expected a memory size such as 512M or 2G", text));
  double scale = 0;
  if (suffix.empty() || suffix == "B") scale = 1;
  if (suffix == "K" || suffix == "KB" || suffix == "KIB") scale = 1024.0;
  if (suffix == "M" || suffix == "MB" || suffix == "MIB") scale = 1024.0 * 1024;
  if (suffix == "G" || suffix == "GB" || suffix == "GIB") scale = 1024.0 * 1024 * 1024;
  if (suffix == "T" || suffix == "TB" || suffix == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  if (scale == 0) return InvalidArgument(fmt::format("'{}': unknown unit '{}' (use K, M, G or T)", text, suffix));
  const double bytes = value * scale;
  if (bytes < 1 || bytes > 9e18) return InvalidArgument(fmt::format("'{}': out of range", text));
  return static_cast<int64_t>(bytes);
}

namespace {
// The manifest's and the report's names, one table per enum.
constexpr std::pair<FileRole, std::string_view> kFileRoleNames[] = {
    {FileRole::kInput, "input"}, {FileRole::kLayer, "layer"}, {FileRole::kOutput, "output"}};
constexpr std::pair<VerifyFindingKind, std::string_view> kVerifyFindingKindNames[] = {
    {VerifyFindingKind::kMissing, "missing"},
    {VerifyFindingKind::kOutside, "outside"},
    {VerifyFindingKind::kUnreadable, "unreadable"},
    {VerifyFindingKind::kSize, "size"},
    {VerifyFindingKind::kSha256, "sha256"},
    {VerifyFindingKind::kDtype, "dtype"},
    {VerifyFindingKind::kShape, "shape"},
    {VerifyFindingKind::kNumeric, "numeric"},
    {VerifyFindingKind::kAbsentInModel, "absent_in_model"},
    {VerifyFindingKind::kNotCompared, "not_compared"},
    {VerifyFindingKind::kExtra, "extra"},
};
}  // namespace

std::string_view FileRoleName(FileRole role) {
  for (const auto& [r, name] : kFileRoleNames)
    if (r == role) return name;
  return "?";
}

Result<FileRole> FileRoleFromName(std::string_view name) {
  for (const auto& [role, n] : kFileRoleNames)
    if (n == name) return role;
  return Corrupt(fmt::format("unknown file role '{}' (expected input, layer or output)", name));
}

std::string_view VerifyFindingKindName(VerifyFindingKind kind) {
  for (const auto& [k, name] : kVerifyFindingKindNames)
    if (k == kind) return name;
  return "?";
}

TensorStats ComputeStats(const Tensor& t) {
  TensorStats s;
  s.count = t.size();
  if (t.dtype() == DType::kString) return s;
  if (t.dtype() == DType::kFloat32 && baseline_internal::Float32FiniteStats(t.view<float>(), s)) return s;
  double sum = 0, sum_sq = 0;
  int64_t finite = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto visit = [&](double v) {
    if (std::isnan(v)) {
      ++s.nan;
    } else if (std::isinf(v)) {
      ++s.inf;
    } else {
      ++finite;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      sum_sq += v * v;
    }
  };
  // The other dtypes, and float32 with a NaN or an Inf, element by element.
  if (t.dtype() == DType::kFloat32) {
    for (float v : t.view<float>()) visit(v);
  } else {
    for (int64_t i = 0; i < t.size(); ++i) visit(t.GetAsDouble(i));
  }
  baseline_internal::SetFiniteStats(lo, hi, sum, sum_sq, finite, s);
  return s;
}

namespace baseline_internal {

void SetFiniteStats(double lo, double hi, double sum, double sum_sq, int64_t finite, TensorStats& s) {
  if (finite == 0) return;
  s.min = lo;
  s.max = hi;
  s.mean = sum / static_cast<double>(finite);
  s.std = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(finite) - s.mean * s.mean));
  s.max_abs = std::max(std::abs(lo), std::abs(hi));
}

}  // namespace baseline_internal

namespace baseline_internal {

namespace {
// JSON has no NaN/Inf; statistics are finite by construction, this is a guard.
nlohmann::json Num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json FileToJson(const BaselineFile& f) {
  nlohmann::json j = {{"file", f.file},       {"tensor", f.tensor}, {"role", FileRoleName(f.role)},
                      {"dtype", f.dtype},     {"shape", f.shape},   {"sha256", f.sha256},
                      {"bytes", f.bytes},     {"deterministic", f.deterministic},
                      {"out_of_scale", f.out_of_scale}};
  if (f.role == FileRole::kLayer) j["index"] = f.index;
  j["producer"] = f.producer.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.producer);
  j["op_type"] = f.op_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.op_type);
  j["stats"] = {{"count", f.stats.count}, {"nan", f.stats.nan},         {"inf", f.stats.inf},
                {"min", Num(f.stats.min)}, {"max", Num(f.stats.max)},   {"mean", Num(f.stats.mean)},
                {"std", Num(f.stats.std)}, {"max_abs", Num(f.stats.max_abs)}};
  return j;
}

namespace {
// An integer field: a float such as 1e300 is refused, not converted (that
// conversion is undefined behaviour; found by fuzz/baseline_manifest_fuzz.cc).
Result<int64_t> Integer(const nlohmann::json& j, const char* key) {
  if (!j.is_number_integer() && !j.is_number_unsigned())
    return Corrupt(fmt::format("a file entry's '{}' is not an integer", key));
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return Corrupt(fmt::format("a file entry's '{}' is out of range", key));
  return j.get<int64_t>();
}
}  // namespace

Result<BaselineFile> FileFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Corrupt("a file entry is not an object");
  for (const char* key : {"shape", "bytes"})
    if (!j.contains(key)) return Corrupt(fmt::format("a file entry has no '{}'", key));
  if (!j["shape"].is_array()) return Corrupt("a file entry's 'shape' is not a list");
  try {
    BaselineFile f;
    f.file = j.at("file").get<std::string>();
    f.tensor = j.at("tensor").get<std::string>();
    PARITY_ASSIGN_OR_RETURN(f.role, FileRoleFromName(j.at("role").get<std::string>()));
    f.dtype = j.at("dtype").get<std::string>();
    for (const auto& d : j["shape"]) {
      PARITY_ASSIGN_OR_RETURN(int64_t dim, Integer(d, "shape"));
      f.shape.push_back(dim);
    }
    f.sha256 = j.at("sha256").get<std::string>();
    PARITY_ASSIGN_OR_RETURN(f.bytes, Integer(j["bytes"], "bytes"));
    if (j.contains("index")) {
      PARITY_ASSIGN_OR_RETURN(f.index, Integer(j["index"], "index"));
    }
    if (j.contains("producer") && j["producer"].is_string()) f.producer = j["producer"].get<std::string>();
    if (j.contains("op_type") && j["op_type"].is_string()) f.op_type = j["op_type"].get<std::string>();
    // A plain relative path: no absolute path, no ".." component (a name
    // such as "layer_0000_block..npy" is fine), no NUL or backslash.
    const std::filesystem::path path(f.file);
    bool plain = !f.file.empty() && !path.is_absolute() && f.file.find('\0') == std::string::npos &&
                 f.file.find('\\') == std::string::npos;
    for (const auto& part : path) plain = plain && part != ".." && part != "." && !part.empty();
    if (!plain) return Corrupt(fmt::format("file entry '{}' is not a plain relative path", f.file));
    return f;
  } catch (const nlohmann::json::exception& e) {
    return Corrupt(fmt::format("a file entry is malformed ({})", e.what()));
  }
}

Result<ParsedManifest> ParseManifest(std::string_view text, const std::string& path) {
  ParsedManifest out;
  nlohmann::json& j = out.json;
  auto parsed = ParseJsonBounded(text, path);  // depth and cost bounded before parsing
  if (!parsed) return Corrupt(parsed.error().message());
  j = std::move(*parsed);
  // Every field is checked for its type before use: .value() on a wrong type throws.
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() ||
      j["schema"].get<std::string>() != kBaselineSchema)
    return InvalidArgument(fmt::format("{}: not a baseline manifest (schema is not {})", path, kBaselineSchema));
  if (!j.contains("samples") || !j["samples"].is_array())
    return Corrupt(fmt::format("{}: 'samples' is missing or not a list", path));
  // A baseline that holds nothing would verify nothing and pass.
  if (j["samples"].empty()) return Corrupt(fmt::format("{}: 'samples' is empty", path));
  for (const char* key : {"config", "model", "env"})
    if (j.contains(key) && !j[key].is_object()) return Corrupt(fmt::format("{}: '{}' is not an object", path, key));
  if (j.contains("model") && j["model"].contains("sha256") && !j["model"]["sha256"].is_string())
    return Corrupt(fmt::format("{}: 'model.sha256' is not a string", path));
  for (const auto& js : j["samples"]) {
    ManifestSample s;
    if (!js.is_object()) return Corrupt(fmt::format("{}: a sample is not an object", path));
    if (js.contains("name") && !js["name"].is_string())
      return Corrupt(fmt::format("{}: a sample's 'name' is not a string", path));
    s.name = js.value("name", "");
    if (!js.contains("files") || !js["files"].is_array())
      return Corrupt(fmt::format("{}: sample '{}' has no file list", path, s.name));
    if (js["files"].empty()) return Corrupt(fmt::format("{}: sample '{}' lists no files", path, s.name));
    for (const auto& jf : js["files"]) {
      PARITY_ASSIGN_OR_RETURN(BaselineFile f, WithContext(FileFromJson(jf), path));
      s.files.push_back(std::move(f));
    }
    out.samples.push_back(std::move(s));
  }
  return out;
}

nlohmann::json SampleToJson(const BaselineSample& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files) files.push_back(baseline_internal::FileToJson(f));
  auto opt = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"name", s.name},
          {"dir", s.dir},
          {"files", files},
          {"findings",
           {{"first_nan", opt(s.first_nan)},
            {"first_inf", opt(s.first_inf)},
            {"nondeterministic", s.nondeterministic},
            {"out_of_scale", s.out_of_scale},
            {"input_scale", s.input_scale},
            {"scale_rule", fmt::format("max|finite value| > {:g} * max(1, max|finite input|)", kScaleFactor)}}}};
}

}  // namespace baseline_internal
nlohmann::json baseline_internal::ControlFlowJson(const ControlFlowReport& r) {
  nlohmann::json ifs = nlohmann::json::array();
  for (const auto& c : r.ifs)
    ifs.push_back({{"node", c.node}, {"then_samples", c.then_samples}, {"else_samples", c.else_samples}});
  return {{"samples", r.samples}, {"ifs", ifs}, {"notes", r.notes}};
}

}  // namespace parity
