#include "engine/inputs/input_check.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>


namespace parity {
namespace {

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
                                       v.name, DeclaredType(v.type), close, v.name));
      } else {
        explained.insert(unbound.begin(), unbound.end());  // listed here already
        problems.push_back(
            fmt::format("no tensor for model input '{}' ({}); the file has {}", v.name, DeclaredType(v.type), Quoted(have)));
      }
      continue;
    }
    if (v.type.dtype && *v.type.dtype != t->dtype()) {
      problems.push_back(fmt::format("input '{}' is {}, the model takes {}", v.name, DTypeName(t->dtype()),
                                     DeclaredType(v.type)));
      continue;
    }
    if (!ShapeFits(v.type, t->shape()))
      problems.push_back(fmt::format("input '{}' has shape {}, the model takes {}", v.name,
                                     ShapeToString(t->shape()), DeclaredType(v.type)));
  }
  for (const auto& h : unbound)
    if (!explained.contains(h))
      problems.push_back(
          fmt::format("'{}' is not an input of the model (inputs: {}){}", h, Quoted(names), DidYouMean(h, names)));
}

}  // namespace

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string close = ClosestName(name, candidates);
  return close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close);
}

std::string DeclaredType(const TensorType& t) {
  std::vector<std::string> dims;
  for (const Dim& d : t.dims) dims.push_back(d.ToString());
  return t.has_shape ? fmt::format("{} [{}]", t.dtype_name, fmt::join(dims, ", ")) : t.dtype_name;
}

bool ShapeFits(const TensorType& t, const Shape& shape) {
  if (!t.has_shape) return true;
  if (shape.size() != t.dims.size()) return false;
  for (size_t k = 0; k < shape.size(); ++k)
    if (t.dims[k].kind == Dim::Kind::kKnown && t.dims[k].value != shape[k]) return false;
  return true;
}

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

}  // namespace parity
