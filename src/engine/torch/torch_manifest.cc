// A PyTorch dump's manifest.json read into a TorchDump (torch_manifest.h):
// every key checked for its type, every file kept inside the dump folder,
// every error naming its key path.
#include "engine/torch/torch_manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "core/json_in.h"
#include "core/json_type.h"
#include "core/json_out.h"
#include "core/short_name.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keeps the manifest's order of inputs/outputs

// Reads keys of one JSON object, naming the key path in every error.
class Reader {
 public:
  Reader(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  std::string Key(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  Result<const Json*> Required(std::string_view key) const {
    auto it = j_.find(std::string(key));
    if (it == j_.end()) return InvalidArgument(fmt::format("{}: required key missing", Key(key)));
    return &*it;
  }
  // The required `key`, read by parse(its key path, its value).
  template <typename Parse>
  auto Required(std::string_view key, Parse parse) const
      -> decltype(parse(std::string(), std::declval<const Json&>())) {
    PARITY_ASSIGN_OR_RETURN(const Json* v, Required(key));
    return parse(Key(key), *v);
  }
  const Json* Optional(std::string_view key) const {
    auto it = j_.find(std::string(key));
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }

 private:
  const Json& j_;
  std::string path_;
};

std::unexpected<Error> WrongType(const std::string& key, std::string_view expected, const Json& got) {
  return InvalidArgument(fmt::format("{}: expected {}, got {}", key, expected, JsonTypeName(got)));
}

Result<std::string> AsString(const std::string& key, const Json& v) {
  if (!v.is_string()) return WrongType(key, "a string", v);
  return v.get<std::string>();
}

Result<int64_t> AsInt(const std::string& key, const Json& v) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) return WrongType(key, "an integer", v);
  return v.get<int64_t>();
}

Result<std::vector<std::string>> AsStrings(const std::string& key, const Json& v) {
  if (!v.is_array()) return WrongType(key, "an array of strings", v);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(auto s, AsString(fmt::format("{}[{}]", key, i), v[i]));
    out.push_back(std::move(s));
  }
  return out;
}

// A relative path inside the dump directory ("../x" and absolute paths are refused).
Result<std::string> AsFile(const std::string& key, const Json& v) {
  PARITY_ASSIGN_OR_RETURN(std::string file, AsString(key, v));
  const fs::path p(file);
  bool escapes = file.empty() || p.is_absolute();
  for (const auto& part : p)
    if (part == "..") escapes = true;
  if (escapes)
    return InvalidArgument(fmt::format("{}: '{}' is not a file inside the dump directory", key, file));
  return file;
}

Result<std::vector<std::pair<std::string, std::string>>> AsFileMap(const std::string& key, const Json& v) {
  if (!v.is_object()) return WrongType(key, "an object of file names", v);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, file] : v.items()) {
    PARITY_ASSIGN_OR_RETURN(std::string f, AsFile(fmt::format("{}.{}", key, name), file));
    out.emplace_back(name, std::move(f));
  }
  return out;
}

Result<Shape> AsShape(const std::string& key, const Json& v) {
  if (!v.is_array()) return WrongType(key, "an array of non-negative integers", v);
  Shape shape;
  for (const Json& d : v) {
    if ((!d.is_number_integer() && !d.is_number_unsigned()) || d.get<int64_t>() < 0)
      return InvalidArgument(
          fmt::format("{}: expected an array of non-negative integers, got an element {}", key,
                      ToJsonText(d)));
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

Result<TorchLayerInput> ParseLayerInput(const std::string& key, const Json& v) {
  if (!v.is_object()) return WrongType(key, "an object", v);
  Reader r(v, key);
  TorchLayerInput in;
  PARITY_ASSIGN_OR_RETURN(in.file, r.Required("file", AsFile));
  PARITY_ASSIGN_OR_RETURN(in.index, r.Required("index", AsInt));
  PARITY_ASSIGN_OR_RETURN(in.dtype, r.Required("dtype", AsString));
  if (!DTypeFromName(in.dtype))
    return InvalidArgument(fmt::format("{}: unknown dtype '{}'", r.Key("dtype"), in.dtype));
  PARITY_ASSIGN_OR_RETURN(in.shape, r.Required("shape", AsShape));
  return in;
}

Result<TorchLayer> ParseLayer(const std::string& key, const Json& v) {
  if (!v.is_object()) return WrongType(key, "an object", v);
  Reader r(v, key);
  TorchLayer layer;
  PARITY_ASSIGN_OR_RETURN(layer.file, r.Required("file", AsFile));
  PARITY_ASSIGN_OR_RETURN(layer.module, r.Required("module", AsString));
  // A module path is a name like a model's: bounded, and shortened where repeated (core/short_name.h).
  if (layer.module.size() > kMaxNameBytes)
    return InvalidArgument(fmt::format("{}: {} bytes long, more than the limit of {}", r.Key("module"),
                                       layer.module.size(), kMaxNameBytes));
  RememberLongName(layer.module);
  PARITY_ASSIGN_OR_RETURN(layer.type, r.Required("type", AsString));
  PARITY_ASSIGN_OR_RETURN(layer.call, r.Required("call", AsInt));
  if (layer.call < 0)
    return InvalidArgument(fmt::format("{}: expected a non-negative integer", r.Key("call")));
  PARITY_ASSIGN_OR_RETURN(const Json* index, r.Required("output_index"));
  if (!index->is_null()) {
    PARITY_ASSIGN_OR_RETURN(int64_t k, AsInt(r.Key("output_index"), *index));
    if (k < 0)
      return InvalidArgument(
          fmt::format("{}: expected null or a non-negative integer", r.Key("output_index")));
    layer.output_index = k;
  }
  PARITY_ASSIGN_OR_RETURN(layer.dtype, r.Required("dtype", AsString));
  if (!DTypeFromName(layer.dtype))
    return InvalidArgument(fmt::format("{}: unknown dtype '{}'", r.Key("dtype"), layer.dtype));
  PARITY_ASSIGN_OR_RETURN(layer.shape, r.Required("shape", AsShape));
  if (const Json* leaf = r.Optional("is_leaf")) {
    if (!leaf->is_boolean()) return WrongType(r.Key("is_leaf"), "a boolean", *leaf);
    layer.is_leaf = leaf->get<bool>();
  }
  if (const Json* inputs = r.Optional("inputs")) {
    const std::string inputs_key = r.Key("inputs");
    if (!inputs->is_array()) return WrongType(inputs_key, "an array", *inputs);
    for (size_t k = 0; k < inputs->size(); ++k) {
      PARITY_ASSIGN_OR_RETURN(TorchLayerInput in, ParseLayerInput(fmt::format("{}[{}]", inputs_key, k), (*inputs)[k]));
      layer.inputs.push_back(std::move(in));
    }
  }
  return layer;
}

Result<TorchExportRecord> ParseExport(const Json& v) {
  if (!v.is_object()) return WrongType("export", "an object", v);
  Reader r(v, "export");
  TorchExportRecord rec;
  PARITY_ASSIGN_OR_RETURN(rec.exporter, r.Required("exporter", AsString));
  if (const Json* opset = r.Optional("opset")) {
    PARITY_ASSIGN_OR_RETURN(rec.opset, AsInt(r.Key("opset"), *opset));
  }
  if (const Json* sha = r.Optional("onnx_sha256")) {
    PARITY_ASSIGN_OR_RETURN(rec.sha256, AsString(r.Key("onnx_sha256"), *sha));
  }
  for (auto [key, out] : {std::pair{"onnx_input_names", &rec.onnx_input_names},
                          std::pair{"onnx_output_names", &rec.onnx_output_names},
                          std::pair{"input_names", &rec.input_names}, std::pair{"output_names", &rec.output_names},
                          std::pair{"tracer_warnings", &rec.tracer_warnings}})
    if (const Json* names = r.Optional(key)) {
      PARITY_ASSIGN_OR_RETURN(*out, AsStrings(r.Key(key), *names));
    }
  if (const Json* unread = r.Optional("unread_inputs")) {
    PARITY_ASSIGN_OR_RETURN(std::vector<std::string> names, AsStrings(r.Key("unread_inputs"), *unread));
    rec.unread_inputs = std::move(names);
  }
  if (const Json* axes = r.Optional("dynamic_axes")) {
    if (!axes->is_object()) return WrongType(r.Key("dynamic_axes"), "an object", *axes);
    for (const auto& [input, dims] : axes->items()) {
      const std::string key = fmt::format("export.dynamic_axes.{}", input);
      if (!dims.is_object()) return WrongType(key, "an object of axis labels", dims);
      for (const auto& [axis, label] : dims.items()) {
        PARITY_ASSIGN_OR_RETURN(rec.dynamic_axes[input][axis], AsString(key + "." + axis, label));
      }
    }
  }
  return rec;
}

Result<TorchDumpSample> ParseSize(const std::string& key, const Json& v) {
  if (!v.is_object()) return WrongType(key, "an object", v);
  Reader r(v, key);
  TorchDumpSample s;
  PARITY_ASSIGN_OR_RETURN(s.name, r.Required("name", AsString));
  PARITY_ASSIGN_OR_RETURN(s.inputs, r.Required("inputs", AsFileMap));
  PARITY_ASSIGN_OR_RETURN(s.outputs, r.Required("outputs", AsFileMap));
  if (s.outputs.empty()) return InvalidArgument(fmt::format("{}: the sample records no output", r.Key("outputs")));
  if (const Json* fp64 = r.Optional("outputs_fp64")) {
    PARITY_ASSIGN_OR_RETURN(s.outputs_fp64, AsFileMap(r.Key("outputs_fp64"), *fp64));
  }
  return s;
}

// `sizes` and `sizes_refused` (both optional: a dump made before them has one sample).
Status ParseSizes(const Reader& r, TorchDump& dump) {
  if (const Json* sizes = r.Optional("sizes")) {
    if (!sizes->is_array()) return WrongType("sizes", "an array", *sizes);
    for (size_t i = 0; i < sizes->size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(TorchDumpSample s, ParseSize(fmt::format("sizes[{}]", i), (*sizes)[i]));
      if (s.name == "traced" || std::any_of(dump.sizes.begin(), dump.sizes.end(),
                                            [&](const TorchDumpSample& o) { return o.name == s.name; }))
        return InvalidArgument(fmt::format("sizes[{}].name: '{}' names another sample too", i, s.name));
      dump.sizes.push_back(std::move(s));
    }
  }
  if (const Json* refused = r.Optional("sizes_refused")) {
    if (!refused->is_array()) return WrongType("sizes_refused", "an array", *refused);
    for (const Json& e : *refused) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
      const bool said = e.contains("error") && e["error"].is_string();
      dump.sizes_refused.push_back(
          fmt::format("{}: {}", e["name"].get<std::string>(), said ? e["error"].get<std::string>() : "refused"));
    }
  }
  return {};
}

// Fills is_leaf where the manifest leaves it out: a module is a leaf when no
// other dumped module lies under its path. Sorted names and one binary search
// each (n log n); asking every layer about every other one (IsLeaf's
// fallback) took 678 s on a manifest of 120k layers.
void FillLeaves(std::vector<TorchLayer>& layers) {
  std::vector<std::string_view> modules;
  modules.reserve(layers.size());
  for (const TorchLayer& l : layers) modules.push_back(l.module);
  std::sort(modules.begin(), modules.end());
  for (TorchLayer& l : layers) {
    if (l.is_leaf) continue;
    const std::string prefix = l.module + ".";
    auto it = std::lower_bound(modules.begin(), modules.end(), std::string_view(prefix));
    l.is_leaf = it == modules.end() || !it->starts_with(prefix);
  }
}

Result<TorchDump> ParseManifest(const Json& j) {
  if (!j.is_object()) return WrongType("(top level)", "an object", j);
  Reader r(j, "");
  TorchDump dump;
  PARITY_ASSIGN_OR_RETURN(dump.schema, r.Required("schema", AsString));
  if (dump.schema != kTorchDumpSchema)
    return InvalidArgument(fmt::format("schema: expected '{}', got '{}'", kTorchDumpSchema, dump.schema));
  PARITY_ASSIGN_OR_RETURN(dump.torch_version, r.Required("torch_version", AsString));
  PARITY_ASSIGN_OR_RETURN(dump.inputs, r.Required("inputs", AsFileMap));
  PARITY_ASSIGN_OR_RETURN(dump.outputs, r.Required("outputs", AsFileMap));
  if (const Json* fp64 = r.Optional("outputs_fp64")) {
    PARITY_ASSIGN_OR_RETURN(dump.outputs_fp64, AsFileMap("outputs_fp64", *fp64));
  }
  PARITY_ASSIGN_OR_RETURN(const Json* layers, r.Required("layers"));
  if (!layers->is_array()) return WrongType("layers", "an array", *layers);
  for (size_t i = 0; i < layers->size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(TorchLayer layer, ParseLayer(fmt::format("layers[{}]", i), (*layers)[i]));
    dump.layers.push_back(std::move(layer));
  }
  FillLeaves(dump.layers);
  if (const Json* rec = r.Optional("export")) {
    PARITY_ASSIGN_OR_RETURN(dump.export_record, ParseExport(*rec));
  }
  PARITY_RETURN_IF_ERROR(ParseSizes(r, dump));
  // A dump without outputs would make every comparison against it vacuous.
  if (dump.outputs.empty()) return InvalidArgument("outputs: the dump records no output");
  return dump;
}

}  // namespace

Result<TorchDump> ParseTorchManifest(std::string_view text, const std::string& path) {
  // Depth and cost bounded before parsing (core/json_in.h).
  PARITY_ASSIGN_OR_RETURN(Json j, ParseOrderedJsonBounded(text, path));
  return WithContext(ParseManifest(j), path);
}

}  // namespace parity
