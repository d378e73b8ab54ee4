// Small pieces of the baseline: file names, statistics, memory sizes, and the
// manifest's JSON form of one file record.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "engine/baseline.h"
#include "engine/baseline_internal.h"

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

TensorStats ComputeStats(const Tensor& t) {
  TensorStats s;
  s.count = t.size();
  if (t.dtype() == DType::kString) return s;
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
  // float32 is nearly every tensor; the generic path widens element by element.
  if (t.dtype() == DType::kFloat32) {
    for (float v : t.view<float>()) visit(v);
  } else {
    for (int64_t i = 0; i < t.size(); ++i) visit(t.GetAsDouble(i));
  }
  if (finite > 0) {
    s.min = lo;
    s.max = hi;
    s.mean = sum / static_cast<double>(finite);
    s.std = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(finite) - s.mean * s.mean));
    s.max_abs = std::max(std::abs(lo), std::abs(hi));
  }
  return s;
}

namespace baseline_internal {

namespace {
// JSON has no NaN/Inf; statistics are finite by construction, this is a guard.
nlohmann::json Num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json FileToJson(const BaselineFile& f) {
  nlohmann::json j = {{"file", f.file},       {"tensor", f.tensor}, {"role", f.role},
                      {"dtype", f.dtype},     {"shape", f.shape},   {"sha256", f.sha256},
                      {"bytes", f.bytes},     {"deterministic", f.deterministic},
                      {"out_of_scale", f.out_of_scale}};
  if (f.role == "layer") j["index"] = f.index;
  j["producer"] = f.producer.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.producer);
  j["op_type"] = f.op_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.op_type);
  j["stats"] = {{"count", f.stats.count}, {"nan", f.stats.nan},         {"inf", f.stats.inf},
                {"min", Num(f.stats.min)}, {"max", Num(f.stats.max)},   {"mean", Num(f.stats.mean)},
                {"std", Num(f.stats.std)}, {"max_abs", Num(f.stats.max_abs)}};
  return j;
}

Result<BaselineFile> FileFromJson(const nlohmann::json& j) {
  try {
    BaselineFile f;
    f.file = j.at("file").get<std::string>();
    f.tensor = j.at("tensor").get<std::string>();
    f.role = j.at("role").get<std::string>();
    f.dtype = j.at("dtype").get<std::string>();
    f.shape = j.at("shape").get<Shape>();
    f.sha256 = j.at("sha256").get<std::string>();
    f.bytes = j.at("bytes").get<int64_t>();
    if (j.contains("index")) f.index = j.at("index").get<int64_t>();
    if (j.contains("producer") && j["producer"].is_string()) f.producer = j["producer"].get<std::string>();
    if (j.contains("op_type") && j["op_type"].is_string()) f.op_type = j["op_type"].get<std::string>();
    if (f.file.empty() || f.file.find("..") != std::string::npos || f.file.front() == '/')
      return Corrupt(fmt::format("file entry '{}' is not a plain relative path", f.file));
    return f;
  } catch (const nlohmann::json::exception& e) {
    return Corrupt(fmt::format("a file entry is malformed ({})", e.what()));
  }
}

}  // namespace baseline_internal
}  // namespace parity
