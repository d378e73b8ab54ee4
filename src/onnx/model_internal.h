// Internal to src/onnx: access to the ModelProto behind a Model, and helpers
// shared by the adapter's files. Nothing outside src/onnx includes this.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <unordered_set>

#include "core/status.h"
#include "onnx/model.h"

namespace parity::onnx_adapter {

struct ModelAccess {
  static const onnx::ModelProto& Proto(const Model& m) { return *m.proto_; }
  static onnx::ModelProto& MutableProto(Model& m) {
    m.unmodified_ = false;  // an edit: the file no longer holds this model
    return *m.proto_;
  }
  static Model FromProto(onnx::ModelProto proto) {
    Model m;
    m.proto_ = std::make_unique<onnx::ModelProto>(std::move(proto));
    return m;
  }
  // A model derived from `from` (a region, an edit) keeps reading the
  // external tensors it copied from `from`'s folder.
  static void InheritExternalData(Model& m, const Model& from) {
    m.external_dir_ = from.external_dir_;
    m.had_external_data_ = from.had_external_data_;
  }
};

inline const onnx::ModelProto& Proto(const Model& m) { return ModelAccess::Proto(m); }
inline onnx::ModelProto& MutableProto(Model& m) { return ModelAccess::MutableProto(m); }
inline Model FromProto(onnx::ModelProto proto) { return ModelAccess::FromProto(std::move(proto)); }
inline void InheritExternalData(Model& m, const Model& from) { ModelAccess::InheritExternalData(m, from); }

// The opset version of the default ("" / "ai.onnx") domain, 0 when absent.
int64_t DefaultOpset(const onnx::ModelProto& m);

// Names produced in `graph`: its inputs, initializers and node outputs.
std::unordered_set<std::string> DefinedNames(const onnx::GraphProto& graph);

// Checks that every node input of the top-level graph is defined (node inputs
// of subgraphs may refer to the outer scope and are not checked here).
// Error: "node 'N' (Op) reads tensor 'T' that no node, graph input or
// initializer produces".
Status CheckReferences(const onnx::GraphProto& graph);

// Reads the external data of `t` (relative to `base_dir`) into raw_data and
// marks it DEFAULT. kCorrupt/kNotFound errors name the tensor and the file.
Status InlineExternalData(onnx::TensorProto& t, const std::filesystem::path& base_dir);

// Calls `fn(TensorProto&)` on every tensor of the graph: initializers, and
// tensor attributes of nodes, recursively through subgraphs. With
// `include_sparse`, also the values and indices of sparse initializers and of
// sparse tensor attributes (each may be external data too).
template <typename Fn>
Status ForEachTensor(onnx::GraphProto& g, Fn&& fn, bool include_sparse = false);

template <typename Fn>
Status ForEachNodeTensor(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, Fn&& fn, bool include_sparse) {
  auto sparse = [&](onnx::SparseTensorProto& s) -> Status {
    if (!include_sparse) return {};
    if (s.has_values()) PARITY_RETURN_IF_ERROR(fn(*s.mutable_values()));
    if (s.has_indices()) PARITY_RETURN_IF_ERROR(fn(*s.mutable_indices()));
    return {};
  };
  for (auto& n : nodes) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t()) PARITY_RETURN_IF_ERROR(fn(*a.mutable_t()));
      for (auto& t : *a.mutable_tensors()) PARITY_RETURN_IF_ERROR(fn(t));
      if (a.has_sparse_tensor()) PARITY_RETURN_IF_ERROR(sparse(*a.mutable_sparse_tensor()));
      for (auto& s : *a.mutable_sparse_tensors()) PARITY_RETURN_IF_ERROR(sparse(s));
      if (a.has_g()) PARITY_RETURN_IF_ERROR(ForEachTensor(*a.mutable_g(), fn, include_sparse));
      for (auto& sg : *a.mutable_graphs()) PARITY_RETURN_IF_ERROR(ForEachTensor(sg, fn, include_sparse));
    }
  }
  return {};
}

template <typename Fn>
Status ForEachTensor(onnx::GraphProto& g, Fn&& fn, bool include_sparse) {
  for (auto& t : *g.mutable_initializer()) PARITY_RETURN_IF_ERROR(fn(t));
  if (include_sparse) {
    for (auto& s : *g.mutable_sparse_initializer()) {
      if (s.has_values()) PARITY_RETURN_IF_ERROR(fn(*s.mutable_values()));
      if (s.has_indices()) PARITY_RETURN_IF_ERROR(fn(*s.mutable_indices()));
    }
  }
  return ForEachNodeTensor(*g.mutable_node(), fn, include_sparse);
}

}  // namespace parity::onnx_adapter
