#include "engine/inputs/input_check.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/sha256.h"

namespace parity {
namespace {

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string close = ClosestName(name, candidates);
  return close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close);
}

// "float32 [batch, 3, 224, 224]"
std::string Declared(const TensorType& t) {
  std::vector<std::string> dims;
  for (const Dim& d : t.dims) dims.push_back(d.ToString());
  return t.has_shape ? fmt::format("{} [{}]", t.dtype_name, fmt::join(dims, ", ")) : t.dtype_name;
}

// Whether `shape` has the declared rank and every known dim (symbolic and
// unknown dims take any size).
bool Fits(const TensorType& t, const Shape& shape) {
  if (!t.has_shape) return true;
  if (shape.size() != t.dims.size()) return false;
  for (size_t k = 0; k < shape.size(); ++k)
    if (t.dims[k].kind == Dim::Kind::kKnown && t.dims[k].value != shape[k]) return false;
  return true;
}

// "'a', 'b', 'c'", or the first 8 and how many in all.
std::string Quoted(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  const size_t shown = std::min<size_t>(names.size(), 8);
  std::string s = fmt::format("'{}'", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), "', '"));
  if (names.size() > shown) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

// Problems of one sample, in the model's input order.
void CheckSample(const Sample& sample, const std::vector<ValueInfo>& inputs, std::vector<std::string>& problems) {
  std::vector<std::string> names;
  for (const auto& v : inputs) names.push_back(v.name);
  const std::vector<std::string> have = sample.tensors.Names();
  std::vector<std::string> unbound;  // tensors that name no input
  for (const auto& h : have)
    if (std::find(names.begin(), names.end(), h) == names.end()) unbound.push_back(h);
  std::set<std::string> explained;  // unbound tensors already named as a near miss
  for (const auto& v : inputs) {
    const Tensor* t = sample.tensors.Find(v.name);
    if (t == nullptr) {
      const std::string close = ClosestName(v.name, unbound);
      if (!close.empty()) {
        explained.insert(close);
        problems.push_back(fmt::format("no tensor for model input '{}' ({}); the file has '{}' (did you mean '{}'?)",
                                       v.name, Declared(v.type), close, v.name));
      } else {
        explained.insert(unbound.begin(), unbound.end());  // listed here already
        problems.push_back(
            fmt::format("no tensor for model input '{}' ({}); the file has {}", v.name, Declared(v.type), Quoted(have)));
      }
      continue;
    }
    if (v.type.dtype && *v.type.dtype != t->dtype()) {
      problems.push_back(fmt::format("input '{}' is {}, the model takes {}", v.name, DTypeName(t->dtype()),
                                     Declared(v.type)));
      continue;
    }
    if (!Fits(v.type, t->shape()))
      problems.push_back(fmt::format("input '{}' has shape {}, the model takes {}", v.name,
                                     ShapeToString(t->shape()), Declared(v.type)));
  }
  for (const auto& h : unbound)
    if (!explained.contains(h))
      problems.push_back(
          fmt::format("'{}' is not an input of the model (inputs: {}){}", h, Quoted(names), DidYouMean(h, names)));
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

TensorSet BindInputNames(const TensorSet& tensors, const std::vector<std::string>& input_names) {
  auto is_input = [&](std::string_view n) {
    return std::find(input_names.begin(), input_names.end(), n) != input_names.end();
  };
  TensorSet out;
  for (const auto& [name, t] : tensors) {
    std::string bound = name;
    if (!is_input(name) && name.starts_with("input_") && is_input(name.substr(6)) &&
        !tensors.Contains(name.substr(6)))
      bound = name.substr(6);
    out.Set(std::move(bound), t);
  }
  return out;
}

Status CheckInputs(const std::vector<Sample>& samples, const std::vector<ValueInfo>& inputs, std::string_view source,
                   std::string_view model_label) {
  std::vector<std::string> problems;
  std::string first;
  for (const auto& s : samples) {
    const size_t before = problems.size();
    CheckSample(s, inputs, problems);
    if (first.empty() && problems.size() > before)
      first = samples.size() > 1 || s.name != "default" ? fmt::format("sample '{}': {}", s.name, problems[before])
                                                         : problems[before];
  }
  if (problems.empty()) return {};
  // The same mistake in every sample is one mistake.
  std::set<std::string> distinct(problems.begin(), problems.end());
  std::string more = distinct.size() > 1 ? fmt::format(" (and {} more problem(s))", distinct.size() - 1) : "";
  return InvalidArgument(fmt::format("{}{}: {}{}", source, model_label.empty() ? "" : fmt::format(" for {}", model_label),
                                     first, more));
}

Status CheckDumpFitsModel(const TorchDump& dump, const ModelInfo& model, const std::string& model_label,
                          const std::vector<std::string>& model_sha256s, std::string* note) {
  const std::string where = dump.dir.string();
  if (dump.export_record && !dump.export_record->sha256.empty() &&
      std::find(model_sha256s.begin(), model_sha256s.end(), dump.export_record->sha256) == model_sha256s.end() &&
      note != nullptr) {
    *note = fmt::format(
        "{}: the dump was made with an export of sha256 {}..., {} is {}...: judging a model changed since the "
        "export (dump again with python -m parity.torch dump --export if it is not derived from it)",
        where, dump.export_record->sha256.substr(0, 12), model_label,
        model_sha256s.empty() ? std::string("?") : model_sha256s.front().substr(0, 12));
  }
  std::vector<std::string> outputs;
  for (const auto& v : model.outputs) outputs.push_back(v.name);
  for (const auto& [name, file] : dump.outputs)
    if (std::find(outputs.begin(), outputs.end(), name) == outputs.end())
      return InvalidArgument(fmt::format("{}: the dump's output '{}' is not an output of {} (outputs: '{}'){}", where,
                                         name, model_label, fmt::join(outputs, "', '"), DidYouMean(name, outputs)));
  auto tensors = LoadTorchInputs(dump);
  if (!tensors) return std::unexpected(tensors.error());
  PARITY_RETURN_IF_ERROR(
      CheckInputs({Sample{"default", std::move(*tensors)}}, model.inputs, where + " (the dump's inputs)", model_label));
  auto expected = LoadTorchOutputs(dump);
  if (!expected) return std::unexpected(expected.error());
  for (const auto& v : model.outputs) {
    const Tensor* t = expected->Find(v.name);
    if (t == nullptr) continue;
    if (!Fits(v.type, t->shape()))
      return InvalidArgument(fmt::format("{}: the dump's output '{}' has shape {}, {} declares {}: the dump was made "
                                         "from another model",
                                         where, v.name, ShapeToString(t->shape()), model_label, Declared(v.type)));
  }
  return {};
}

Status CheckDumpFitsModelFiles(const TorchDump& dump, const ModelInfo& model,
                               const std::vector<std::string>& model_paths, std::string* note) {
  std::vector<std::string> shas;
  for (const auto& path : model_paths)
    if (!path.empty())
      if (auto sha = Sha256FileHex(path)) shas.push_back(*sha);
  return CheckDumpFitsModel(dump, model, model_paths.empty() ? "the model" : model_paths.front(), shas, note);
}

Status CheckSomeLayerAligned(const TorchDump& dump, size_t aligned, const std::string& model_label) {
  if (aligned > 0 || dump.layers.empty()) return {};
  return InvalidArgument(fmt::format(
      "{}: none of the dump's {} layers aligns with a tensor of {}: the dump was made from another model",
      dump.dir.string(), dump.layers.size(), model_label));
}

}  // namespace parity
