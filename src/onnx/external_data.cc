#include "onnx/external_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "core/dtype.h"
#include "core/tensor.h"
#include "onnx/file_read.h"
#include "onnx/model_internal.h"

namespace parity::onnx_adapter {

namespace fs = std::filesystem;

namespace {

Result<int64_t> ParseInt(const std::string& key, const std::string& value) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v < 0)
    return Corrupt(fmt::format("external data {} '{}' is not a non-negative integer", key, value));
  return v;
}

// Whether `path` lies inside `dir` (both canonical).
bool IsInside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end() && p != path.end();
}

// The real path of `location` under base_dir, refusing absolute paths, ".."
// and a symlink anywhere on the way that leads out of base_dir.
Result<fs::path> ResolveLocation(const std::string& location, const fs::path& base_dir) {
  const fs::path rel(location);
  if (location.empty()) return Corrupt("external data has an empty location");
  if (rel.is_absolute())
    return Unsupported(
        fmt::format("external data location '{}' is absolute; ONNX requires a path relative "
                    "to the model's directory",
                    location));
  for (const auto& part : rel)
    if (part == "..")
      return Unsupported(fmt::format("external data location '{}' leaves the model's directory", location));
  if (location.find('\0') != std::string::npos)
    return Corrupt(fmt::format("external data location '{}' holds a NUL byte", location));
  std::error_code ec;
  const fs::path real = fs::canonical(base_dir / rel, ec);
  if (ec) return NotFound(fmt::format("file {} does not exist", (base_dir / rel).string()));
  const fs::path real_dir = fs::canonical(base_dir, ec);
  if (ec || !IsInside(real, real_dir))
    return Unsupported(fmt::format(
        "external data location '{}' resolves (through a symlink) to {}, outside the model's directory", location,
        real.string()));
  return real;
}

// Bytes claimed so far per external file (canonical path): their sum may not
// pass the file's size.
using Claims = std::map<fs::path, int64_t>;

// Where an external tensor's bytes lie, once checked.
struct ExternalRef {
  fs::path file;  // canonical, inside the model's folder
  int64_t offset = 0;
  int64_t length = 0;
};

// Checks `t`'s external data without reading it: the location is confined
// to base_dir, a regular file, the region inside the file, its length what
// the dims declare; with `claims`, the tensors reading one file claim at most
// its size.
Result<ExternalRef> CheckExternalTensor(const onnx::TensorProto& t, const fs::path& base_dir, Claims* claims) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      PARITY_ASSIGN_OR_RETURN(offset, ParseInt("offset", kv.value()));
    } else if (kv.key() == "length") {
      PARITY_ASSIGN_OR_RETURN(length, ParseInt("length", kv.value()));
    }
  }
  const std::string context = fmt::format("tensor '{}' (external data '{}')", t.name(), location);
  auto resolved = ResolveLocation(location, base_dir);
  if (!resolved) return std::unexpected(std::move(resolved.error()).With(context));
  std::error_code ec;
  if (!fs::is_regular_file(*resolved, ec))
    return InvalidArgument(fmt::format("{}: {} is not a regular file", context, resolved->string()));
  const auto file_size = static_cast<int64_t>(fs::file_size(*resolved, ec));
  if (ec) return InvalidArgument(fmt::format("{}: cannot stat {}: {}", context, resolved->string(), ec.message()));
  if (length < 0) length = file_size - offset;
  if (offset > file_size || length > file_size - offset)
    return Corrupt(fmt::format("{}: {} bytes at offset {} pass the end of {} ({} bytes)", context, length, offset,
                               resolved->string(), file_size));
  if (claims != nullptr) {
    int64_t& claimed = (*claims)[*resolved];
    if (length > file_size - claimed)
      return Corrupt(fmt::format(
          "{}: the tensors reading {} claim more than its {} bytes (overlapping regions; refused so that memory "
          "stays bounded by the file)",
          context, resolved->string(), file_size));
    claimed += length;
  }

  // Check the declared size against the tensor's shape before reading.
  if (auto dtype = DTypeFromOnnx(t.data_type()); dtype && *dtype != DType::kString) {
    Shape shape(t.dims().begin(), t.dims().end());
    auto count = ElementCount(shape);
    if (!count) return Corrupt(fmt::format("{}: {}", context, count.error().message()));
    const int64_t expected = *count * static_cast<int64_t>(DTypeSize(*dtype));
    if (expected != length)
      return Corrupt(fmt::format("{}: holds {} bytes, its shape {} of {} needs {}", context, length,
                                 ShapeToString(shape), DTypeName(*dtype), expected));
  }
  return ExternalRef{*resolved, offset, length};
}

Status InlineChecked(onnx::TensorProto& t, const ExternalRef& ref) {
  auto bytes = ReadFileRange(ref.file, ref.offset, ref.length);
  if (!bytes) return std::unexpected(std::move(bytes.error()).With(fmt::format("tensor '{}'", t.name())));
  t.set_raw_data(std::move(*bytes));
  t.clear_external_data();
  t.clear_data_location();  // DEFAULT, and serialized as if never external
  return {};
}

Status InlineExternalDataClaimed(onnx::TensorProto& t, const fs::path& base_dir, Claims* claims) {
  PARITY_ASSIGN_OR_RETURN(ExternalRef ref, CheckExternalTensor(t, base_dir, claims));
  return InlineChecked(t, ref);
}

bool IsExternal(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

std::unexpected<Error> NeedsAPath(const onnx::TensorProto& t) {
  return Unsupported(
      fmt::format("tensor '{}' is stored as external data, which needs the model's path; "
                  "load the model from its file",
                  t.name()));
}

// Inlines one tensor if it is external; `any` records that one was.
auto Inliner(const fs::path& base_dir, Claims& claims, bool& any) {
  return [&base_dir, &claims, &any](onnx::TensorProto& t) -> Status {
    if (!IsExternal(t)) return {};
    any = true;
    if (base_dir.empty()) return NeedsAPath(t);
    return InlineExternalDataClaimed(t, base_dir, &claims);
  };
}

}  // namespace

Status InlineExternalData(onnx::TensorProto& t, const fs::path& base_dir) {
  return InlineExternalDataClaimed(t, base_dir, nullptr);
}

Result<bool> InlineAllExternalData(onnx::GraphProto& graph, const fs::path& base_dir) {
  bool any = false;
  Claims claims;
  PARITY_RETURN_IF_ERROR(ForEachTensor(graph, Inliner(base_dir, claims, any), /*include_sparse=*/true));
  return any;
}

Result<bool> InlineAllExternalData(onnx::ModelProto& model, const fs::path& base_dir) {
  bool any = false;
  Claims claims;
  auto inline_one = Inliner(base_dir, claims, any);
  PARITY_RETURN_IF_ERROR(ForEachTensor(*model.mutable_graph(), inline_one, /*include_sparse=*/true));
  for (auto& f : *model.mutable_functions())
    PARITY_RETURN_IF_ERROR(ForEachNodeTensor(*f.mutable_node(), inline_one, /*include_sparse=*/true));
  return any;
}

Result<ExternalResolution> ResolveExternalData(onnx::ModelProto& model, const fs::path& base_dir,
                                               int64_t keep_from) {
  ExternalResolution out;
  Claims claims;
  // The main graph's dense initializers first: the large ones are checked
  // and kept as references, in the same claims as everything inlined after.
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (!IsExternal(t)) continue;
    out.any = true;
    if (base_dir.empty()) return NeedsAPath(t);
    PARITY_ASSIGN_OR_RETURN(ExternalRef ref, CheckExternalTensor(t, base_dir, &claims));
    if (ref.length >= keep_from) {
      out.kept = true;
    } else {
      PARITY_RETURN_IF_ERROR(InlineChecked(t, ref));
    }
  }
  bool any = false;
  auto inline_one = Inliner(base_dir, claims, any);
  onnx::GraphProto& g = *model.mutable_graph();
  for (auto& s : *g.mutable_sparse_initializer()) {
    if (s.has_values()) PARITY_RETURN_IF_ERROR(inline_one(*s.mutable_values()));
    if (s.has_indices()) PARITY_RETURN_IF_ERROR(inline_one(*s.mutable_indices()));
  }
  PARITY_RETURN_IF_ERROR(ForEachNodeTensor(*g.mutable_node(), inline_one, /*include_sparse=*/true));
  for (auto& f : *model.mutable_functions())
    PARITY_RETURN_IF_ERROR(ForEachNodeTensor(*f.mutable_node(), inline_one, /*include_sparse=*/true));
  out.any = out.any || any;
  return out;
}

Result<std::string> ReadExternalTensor(const onnx::TensorProto& t, const fs::path& dir) {
  if (dir.empty()) return NeedsAPath(t);
  PARITY_ASSIGN_OR_RETURN(ExternalRef ref, CheckExternalTensor(t, dir, nullptr));
  auto bytes = ReadFileRange(ref.file, ref.offset, ref.length);
  if (!bytes) return std::unexpected(std::move(bytes.error()).With(fmt::format("tensor '{}'", t.name())));
  return bytes;
}

Status InlineKeptExternalData(onnx::GraphProto& graph, const fs::path& dir) {
  for (auto& t : *graph.mutable_initializer()) {
    if (!IsExternal(t)) continue;
    PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadExternalTensor(t, dir));
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.clear_data_location();
  }
  return {};
}

void SetExternalData(onnx::TensorProto& t, const std::string& location, size_t offset, size_t length) {
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  t.clear_external_data();
  auto add = [&t](const char* key, std::string value) {
    auto* e = t.add_external_data();
    e->set_key(key);
    e->set_value(std::move(value));
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

Result<std::string> MoveToExternalData(onnx::GraphProto& graph, const std::string& location,
                                       int64_t threshold) {
  std::string blob;
  PARITY_RETURN_IF_ERROR(ForEachTensor(graph, [&](onnx::TensorProto& t) -> Status {
    if (!t.has_raw_data() || static_cast<int64_t>(t.raw_data().size()) < threshold) return {};
    const size_t offset = (blob.size() + 4095) / 4096 * 4096;
    blob.resize(offset, '\0');
    blob += t.raw_data();
    t.clear_raw_data();
    SetExternalData(t, location, offset, blob.size() - offset);
    return {};
  }));
  return blob;
}

}  // namespace parity::onnx_adapter
