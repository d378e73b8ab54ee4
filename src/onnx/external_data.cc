#include "onnx/external_data.h"

#include <fmt/format.h>

#include <charconv>

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

// The path of `location` under base_dir, refusing absolute paths and "..".
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
  return base_dir / rel;
}

}  // namespace

Status InlineExternalData(onnx::TensorProto& t, const fs::path& base_dir) {
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
    return NotFound(fmt::format("{}: file {} does not exist", context, resolved->string()));
  if (length < 0) length = static_cast<int64_t>(fs::file_size(*resolved, ec)) - offset;

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
  auto bytes = ReadFileRange(*resolved, offset, length);
  if (!bytes) return std::unexpected(std::move(bytes.error()).With(context));
  t.set_raw_data(std::move(*bytes));
  t.clear_external_data();
  t.clear_data_location();  // DEFAULT, and serialized as if never external
  return {};
}

Result<bool> InlineAllExternalData(onnx::GraphProto& graph, const fs::path& base_dir) {
  bool any = false;
  PARITY_RETURN_IF_ERROR(ForEachTensor(graph, [&](onnx::TensorProto& t) -> Status {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return {};
    any = true;
    if (base_dir.empty())
      return Unsupported(
          fmt::format("tensor '{}' is stored as external data, which needs the model's path; "
                      "load the model from its file",
                      t.name()));
    return InlineExternalData(t, base_dir);
  }));
  return any;
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
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    t.clear_external_data();
    auto add = [&](const char* k, std::string v) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(std::move(v));
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(blob.size() - offset));
    return {};
  }));
  return blob;
}

}  // namespace parity::onnx_adapter
