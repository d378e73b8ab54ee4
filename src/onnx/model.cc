#include "onnx/model.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>

#include <climits>

#include "core/atomic_file.h"
#include "core/mapped_file.h"
#include "onnx/external_data.h"
#include "onnx/file_read.h"
#include "onnx/function_cost.h"
#include "onnx/name_guard.h"
#include "onnx/model_internal.h"
#include "onnx/tensor_proto_internal.h"
#include "onnx/weights_in_file.h"

namespace parity {

namespace fs = std::filesystem;
using onnx_adapter::kMaxProtoBytes;

Model::Model() = default;
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

namespace {

// The name the model's own file may be referenced by as its external data:
// its file name, when the file lies in `base` itself (not a symlink into
// another folder, whose references would resolve outside the model's folder).
std::string SelfLocation(const fs::path& path, const fs::path& base) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return {};
  const fs::path real_base = fs::canonical(base, ec);
  if (ec || real.parent_path() != real_base) return {};
  return real.filename().string();
}

// Whether a tensor of the model other than those left in its own file
// (`self`) is external data.
bool HasOtherExternalData(onnx::ModelProto& m, const std::string& self) {
  bool other = false;
  auto visit = [&](onnx::TensorProto& t) -> Status {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return {};
    for (const auto& kv : t.external_data())
      if (kv.key() == "location" && kv.value() != self) other = true;
    return {};
  };
  (void)onnx_adapter::ForEachTensor(*m.mutable_graph(), visit, /*include_sparse=*/true);
  for (auto& f : *m.mutable_functions()) (void)onnx_adapter::ForEachNodeTensor(*f.mutable_node(), visit, true);
  return other;
}

}  // namespace

Result<Model> Model::Load(const fs::path& path, const LoadOptions& options) {
  // Mapped, not copied: the walk that leaves the inline weights in the file
  // never reads their pages (core/mapped_file.h); the mapping goes with Load.
  PARITY_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path, kMaxProtoBytes));
  fs::path base = path.parent_path();
  if (base.empty()) base = ".";
  const std::string self = options.external_data ? SelfLocation(path, base) : std::string();
  PARITY_ASSIGN_OR_RETURN(Model m, Parse(file.bytes(), path.string(), base, options.external_data, self));
  m.path_ = path;
  if (m.weights_in_file_) {
    // ORT gets the graph from memory and reads the weights from this file
    // (SourceOf), not the file whole: the file is not offered as the model.
    m.had_external_data_ = HasOtherExternalData(*m.proto_, self);
  } else {
    m.unmodified_ = true;
  }
  return m;
}

Result<Model> Model::FromBytes(std::string_view bytes, std::string_view source, const fs::path& base_dir) {
  return Parse(bytes, source, base_dir, /*external_data=*/true, /*self_location=*/"");
}

Result<Model> Model::Parse(std::string_view bytes, std::string_view source, const fs::path& base_dir,
                           bool external_data, const std::string& self_location) {
  const auto invalid = [&](std::string_view why) {
    return InvalidArgument(fmt::format("{}: not a valid ONNX model ({})", source, why));
  };
  if (bytes.empty()) return invalid("empty file");
  if (static_cast<int64_t>(bytes.size()) > kMaxProtoBytes)
    return invalid("larger than protobuf's 2 GiB limit; large weights must be stored as external data");
  auto proto = std::make_unique<onnx::ModelProto>();
  bool weights_in_file = false;
  try {
    std::optional<onnx::ModelProto> graph_only;
    if (!self_location.empty())
      graph_only = onnx_adapter::ParseLeavingWeightsInFile(bytes, self_location, kInlineExternalBelow);
    if (graph_only) {
      *proto = std::move(*graph_only);
      weights_in_file = true;
    } else {
      google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
      in.SetTotalBytesLimit(INT_MAX);
      if (!proto->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        return invalid("protobuf parse failed");
    }
  } catch (const std::exception& e) {
    return invalid(fmt::format("protobuf parse failed: {}", e.what()));
  }
  if (proto->ir_version() <= 0) return invalid("no ir_version");
  if (proto->ir_version() > onnx::IR_VERSION)
    return invalid(fmt::format("IR version {} is newer than the newest this parity reads ({})", proto->ir_version(),
                               static_cast<int>(onnx::IR_VERSION)));
  if (!proto->has_graph()) return invalid("no graph");
  if (proto->opset_import_size() == 0) return invalid("no opset_import");
  // First: every later message may quote a name.
  if (auto names = onnx_adapter::CheckNameLengths(*proto); !names) return invalid(names.error().message());
  if (proto->graph().output_size() > kMaxGraphOutputs)
    return invalid(fmt::format("{} graph outputs, more than the limit of {}", proto->graph().output_size(),
                               kMaxGraphOutputs));
  for (const auto& node : proto->graph().node())
    if (node.output_size() > kMaxNodeOutputs)
      return invalid(fmt::format("node '{}' ({}) has {} outputs, more than the limit of {}", node.name(),
                                 node.op_type(), node.output_size(), kMaxNodeOutputs));

  if (proto->functions_size() > 0) {
    auto expanded = onnx_adapter::ExpandedNodeCount(*proto);
    if (!expanded) return invalid(expanded.error().message());
    if (*expanded > onnx_adapter::kMaxExpandedNodes)
      return invalid(fmt::format("its local functions expand to {} nodes, more than the limit of {}",
                                 *expanded == INT64_MAX ? "more than 2^63" : std::to_string(*expanded),
                                 onnx_adapter::kMaxExpandedNodes));
  }

  Model m;
  m.proto_ = std::move(proto);
  m.weights_in_file_ = weights_in_file;
  if (external_data) {
    PARITY_ASSIGN_OR_RETURN(const auto found, WithContext(onnx_adapter::ResolveExternalData(
                                                              *m.proto_, base_dir, kInlineExternalBelow),
                                                          std::string(source)));
    m.had_external_data_ = found.any;
    if (found.kept) {
      std::error_code ec;
      m.external_dir_ = fs::canonical(base_dir, ec);
      if (ec) return NotFound(fmt::format("{}: cannot resolve the model's folder {}", source, base_dir.string()));
    }
  }
  PARITY_RETURN_IF_ERROR(WithContext(onnx_adapter::CheckReferences(m.proto_->graph()), std::string(source)));
  // Before any session: ORT allocates what a tensor declares before it reads it.
  if (auto s = onnx_adapter::CheckTensorSizes(m.proto_->graph()); !s) return invalid(s.error().message());
  return m;
}

Result<std::string> Model::Serialize() const {
  if (!proto_) return InternalError("Serialize() on an empty Model");
  if (external_dir_.empty()) return SerializeKeepingExternalData();
  onnx::ModelProto copy = *proto_;
  PARITY_RETURN_IF_ERROR(onnx_adapter::InlineKeptExternalData(*copy.mutable_graph(), external_dir_));
  return onnx_adapter::FromProto(std::move(copy)).SerializeKeepingExternalData();
}

Result<std::string> Model::SerializeKeepingExternalData() const {
  if (!proto_) return InternalError("Serialize() on an empty Model");
  const size_t size = proto_->ByteSizeLong();
  if (size > static_cast<size_t>(kMaxProtoBytes))
    return Unsupported(fmt::format(
        "the model is {} bytes serialized, over protobuf's 2 GiB limit; save it with external data", size));
  std::string out;
  if (!proto_->SerializeToString(&out)) return InternalError("protobuf failed to serialize the model");
  return out;
}

Status Model::Save(const fs::path& path, const SaveOptions& options) const {
  if (!proto_) return InternalError("Save() on an empty Model");
  using Ext = SaveOptions::ExternalData;
  bool external = options.external_data == Ext::kAlways;
  if (options.external_data == Ext::kAuto)
    external = had_external_data_ || proto_->ByteSizeLong() > static_cast<size_t>(kMaxProtoBytes);
  if (!external) {
    PARITY_ASSIGN_OR_RETURN(std::string bytes, WithContext(Serialize(), path.string()));
    return WriteFileAtomic(path, bytes);
  }
  onnx::ModelProto copy = *proto_;
  if (!external_dir_.empty())
    PARITY_RETURN_IF_ERROR(onnx_adapter::InlineKeptExternalData(*copy.mutable_graph(), external_dir_));
  const std::string data_name = path.filename().string() + ".data";
  PARITY_ASSIGN_OR_RETURN(std::string data, onnx_adapter::MoveToExternalData(*copy.mutable_graph(), data_name,
                                                                             options.size_threshold));
  if (copy.ByteSizeLong() > static_cast<size_t>(kMaxProtoBytes))
    return Unsupported(
        fmt::format("{}: the model is over 2 GiB even with its initializers external", path.string()));
  std::string bytes;
  if (!copy.SerializeToString(&bytes)) return InternalError("protobuf failed to serialize the model");
  // Data first: a model file never references data that is not there yet.
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(path.parent_path() / data_name, data));
  return WriteFileAtomic(path, bytes);
}

Model Model::Clone() const {
  Model m;
  if (proto_) m.proto_ = std::make_unique<onnx::ModelProto>(*proto_);
  m.path_ = path_;
  m.had_external_data_ = had_external_data_;
  m.external_dir_ = external_dir_;
  m.weights_in_file_ = weights_in_file_;
  return m;
}

}  // namespace parity
