#include "ort/tensor_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parity::ort {
namespace {

std::string DTypeText(const TensorInfo& info) {
  if (!info.is_tensor) return "non-tensor";
  if (info.dtype) return std::string(DTypeName(*info.dtype));
  return fmt::format("onnx type {}", info.onnx_type);
}

}  // namespace

std::string TensorInfo::ShapeString() const {
  if (!rank_known) return "[...]";
  std::vector<std::string> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string& symbol = i < dim_names.size() ? dim_names[i] : std::string();
    if (shape[i] >= 0) {
      dims.push_back(std::to_string(shape[i]));
    } else {
      dims.push_back(symbol.empty() ? "?" : symbol);
    }
  }
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

std::string TensorInfo::ToString() const { return fmt::format("{} {}", DTypeText(*this), ShapeString()); }

Status CheckInputs(const std::vector<TensorInfo>& model_inputs, const TensorSet& given) {
  std::vector<std::string> findings;
  std::vector<std::string> expected_names;
  for (const TensorInfo& info : model_inputs) {
    expected_names.push_back(info.name);
    const Tensor* t = given.Find(info.name);
    if (t == nullptr) {
      findings.push_back(fmt::format("missing input '{}' ({})", info.name, info.ToString()));
      continue;
    }
    if (!info.is_tensor || !info.dtype) {
      findings.push_back(fmt::format("input '{}': the model expects {}, which parity cannot feed", info.name,
                                     DTypeText(info)));
      continue;
    }
    if (t->dtype() != *info.dtype) {
      findings.push_back(fmt::format("input '{}': expected {}, given {}", info.name, DTypeName(*info.dtype),
                                     DTypeName(t->dtype())));
    }
    if (!info.rank_known) continue;
    if (t->rank() != static_cast<int64_t>(info.shape.size())) {
      findings.push_back(fmt::format("input '{}': expected rank {} {}, given rank {} {}", info.name,
                                     info.shape.size(), info.ShapeString(), t->rank(),
                                     ShapeToString(t->shape())));
      continue;
    }
    for (size_t d = 0; d < info.shape.size(); ++d) {
      if (info.shape[d] >= 0 && info.shape[d] != t->shape()[d]) {
        findings.push_back(
            fmt::format("input '{}': dimension {} expected {}, given {} (expected {}, given {})", info.name,
                        d, info.shape[d], t->shape()[d], info.ShapeString(), ShapeToString(t->shape())));
        break;
      }
    }
  }
  for (const NamedTensor& nt : given) {
    bool known = false;
    for (const TensorInfo& info : model_inputs) known = known || info.name == nt.name;
    if (!known)
      findings.push_back(
          fmt::format("unknown input '{}' (model inputs: {})", nt.name, fmt::join(expected_names, ", ")));
  }
  if (findings.empty()) return {};
  return InvalidArgument(fmt::format("{}", fmt::join(findings, "; ")));
}

}  // namespace parity::ort
