// Declared-shape contradictions (SPEC "warning"): one symbol of the model's
// signature (a dim_param such as `height`) bound to two sizes in one run, on
// an input and an output or on two outputs. The values are not affected
// (the model computes what it computes); a consumer sizing buffers by the
// declared shapes is. Seen on every sample judged (generated, user, the
// dumps'), reported once for the model as a warning of the signature stage.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/check/check_internal.h"

namespace parity::check_internal {

void BindDeclaredShapes(DeclaredShapes& declared, const ModelInfo& info, const std::string& sample,
                        const TensorSet& inputs, const TensorSet& outputs) {
  struct Bound {
    int64_t size;
    std::string where;
  };
  std::map<std::string, Bound> bound;  // symbol -> its first size in this run
  bool any = false;
  auto bind = [&](const std::vector<ValueInfo>& values, const TensorSet& tensors) {
    for (const auto& v : values) {
      const Tensor* t = tensors.Find(v.name);
      if (t == nullptr || !v.type.has_shape || t->shape().size() != v.type.dims.size()) continue;
      for (size_t i = 0; i < v.type.dims.size(); ++i) {
        const Dim& d = v.type.dims[i];
        if (d.kind != Dim::Kind::kSymbolic) continue;
        any = true;
        const std::string where = fmt::format("'{}' axis {}", v.name, i);
        auto [it, fresh] = bound.try_emplace(d.symbol, Bound{t->shape()[i], where});
        if (fresh || it->second.size == t->shape()[i]) continue;
        DeclaredClash& clash =
            declared.clashes[fmt::format("'{}' at {} and at {}", d.symbol, it->second.where, where)];
        if (clash.example.empty())
          clash.example = fmt::format("'{}' is {} at {} but {} at {} (sample '{}')", d.symbol, it->second.size,
                                      it->second.where, t->shape()[i], where, sample);
        if (std::find(clash.samples.begin(), clash.samples.end(), sample) == clash.samples.end())
          clash.samples.push_back(sample);
      }
    }
  };
  bind(info.inputs, inputs);
  bind(info.outputs, outputs);
  if (any) declared.samples.push_back(sample);
}

void AddDeclaredShapesFinding(const DeclaredShapes& declared, CheckReport& report) {
  StageResult* signature = nullptr;
  for (auto& s : report.stages)
    if (s.name == "signature") signature = &s;
  if (signature == nullptr || declared.samples.empty()) return;
  const std::string id = "signature.declared_shapes";
  const size_t judged = declared.samples.size();
  if (declared.clashes.empty()) {
    signature->findings.push_back(Pass(id, fmt::format("every symbolic axis names one size on each of the {} "
                                                       "samples run",
                                                       judged)));
    return;
  }
  std::vector<std::string> clashes;
  std::vector<std::string> samples;
  for (const auto& [key, clash] : declared.clashes) {
    clashes.push_back(clash.example);
    for (const auto& s : clash.samples)
      if (std::find(samples.begin(), samples.end(), s) == samples.end()) samples.push_back(s);
  }
  signature->findings.push_back(
      Warn(id, fmt::format("the model's declared shapes contradict what it computes on {} of the {} samples run "
                           "({}): symbol {}; one symbol must name one size: a consumer sizing buffers by the "
                           "declared shapes is wrong, the values are not (fix the export's dynamic axes: one "
                           "label per size)",
                           samples.size(), judged, fmt::join(samples, ", "), fmt::join(clashes, "; symbol "))));
}

}  // namespace parity::check_internal
