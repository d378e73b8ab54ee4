#include "onnx/tensor_proto.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>

#include <bit>
#include <climits>
#include <cstring>

#include "core/atomic_file.h"
#include "onnx/file_read.h"
#include "onnx/tensor_proto_internal.h"

namespace parity {

static_assert(std::endian::native == std::endian::little,
              "raw_data is little-endian; big-endian hosts need swaps");

namespace fs = std::filesystem;

namespace onnx_adapter {
namespace {

// Copies a repeated typed field into the tensor's buffer, narrowing each
// element to T (int32_data holds int8/16, uint8/16, bool and 16-bit float bits).
template <typename T, typename Field>
void CopyNarrow(const Field& field, Tensor& t) {
  auto out = t.mutable_view<T>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(field.Get(static_cast<int>(i)));
}

std::string TypeLabel(int elem_type) {
  static const char* const kNames[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4"};
  if (elem_type >= 0 && elem_type < static_cast<int>(std::size(kNames)))
    return fmt::format("{} ({})", kNames[elem_type], elem_type);
  return fmt::format("{}", elem_type);
}

// The repeated field ONNX uses for a dtype's typed (not raw) data, and its length.
struct TypedField {
  const char* name;
  int64_t size;
};

TypedField TypedFieldOf(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {"float_data", p.float_data_size()};
    case DType::kFloat64:
      return {"double_data", p.double_data_size()};
    case DType::kInt64:
      return {"int64_data", p.int64_data_size()};
    case DType::kUInt32:
    case DType::kUInt64:
      return {"uint64_data", p.uint64_data_size()};
    default:
      return {"int32_data", p.int32_data_size()};
  }
}

// Copies the typed field into `t`, whose element count the caller has checked.
void CopyTypedField(const onnx::TensorProto& p, Tensor& t) {
  switch (t.dtype()) {
    case DType::kFloat32:
      CopyNarrow<float>(p.float_data(), t);
      break;
    case DType::kFloat64:
      CopyNarrow<double>(p.double_data(), t);
      break;
    case DType::kInt64:
      CopyNarrow<int64_t>(p.int64_data(), t);
      break;
    case DType::kUInt32:
      CopyNarrow<uint32_t>(p.uint64_data(), t);
      break;
    case DType::kUInt64:
      CopyNarrow<uint64_t>(p.uint64_data(), t);
      break;
    case DType::kInt32:
      CopyNarrow<int32_t>(p.int32_data(), t);
      break;
    case DType::kInt16:
      CopyNarrow<int16_t>(p.int32_data(), t);
      break;
    case DType::kInt8:
      CopyNarrow<int8_t>(p.int32_data(), t);
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      CopyNarrow<uint16_t>(p.int32_data(), t);
      break;
    case DType::kUInt8:
      CopyNarrow<uint8_t>(p.int32_data(), t);
      break;
    case DType::kBool: {
      auto out = t.mutable_view<uint8_t>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = p.int32_data(static_cast<int>(i)) != 0 ? 1 : 0;
      break;
    }
    case DType::kString:
      break;  // TensorFromProto reads string_data itself
  }
}

// The dtype of `p` when parity can hold it as a Tensor (not segmented, not
// external, a known element type).
Result<DType> ReadableDType(const onnx::TensorProto& p, const std::string& label) {
  if (p.has_segment()) return Unsupported(fmt::format("{}: segmented TensorProto", label));
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    return Unsupported(fmt::format("{}: stored as external data", label));
  const auto dtype = DTypeFromOnnx(p.data_type());
  if (p.data_type() == 0)
    return Unsupported(
        fmt::format("{}: element type UNDEFINED (0): not a tensor (a SequenceProto, MapProto or "
                    "OptionalProto?)",
                    label));
  if (!dtype)
    return Unsupported(fmt::format("{}: element type {} is not supported", label, TypeLabel(p.data_type())));
  return *dtype;
}

// The number of entries `p` holds for `dtype` (strings, raw bytes / element
// size, or its typed field), beside the count its dims declare.
Status CheckDeclaredSize(const onnx::TensorProto& p, const std::string& label) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.has_segment()) return {};
  const auto dtype = DTypeFromOnnx(p.data_type());
  if (!dtype) return {};
  Shape shape(p.dims().begin(), p.dims().end());
  auto count_or = ElementCount(shape);
  if (!count_or) return InvalidArgument(fmt::format("{}: {}", label, count_or.error().message()));
  const int64_t count = *count_or;
  if (*dtype == DType::kString) {
    // ONNX stores strings in string_data only; raw_data beside them would be
    // bytes nobody reads (found by fuzz/string_tensor_fuzz.cc).
    if (p.has_raw_data())
      return InvalidArgument(fmt::format("{}: a STRING tensor with raw_data (strings go in string_data)", label));
    if (p.string_data_size() != count)
      return InvalidArgument(
          fmt::format("{}: {} strings for shape {}", label, p.string_data_size(), ShapeToString(shape)));
    return {};
  }
  const auto elem_size = static_cast<int64_t>(DTypeSize(*dtype));
  if (p.has_raw_data()) {
    if (count > INT64_MAX / elem_size || static_cast<int64_t>(p.raw_data().size()) != count * elem_size)
      return InvalidArgument(fmt::format("{}: raw_data has {} bytes, shape {} of {} needs {}", label,
                                         p.raw_data().size(), ShapeToString(shape), DTypeName(*dtype),
                                         count > INT64_MAX / elem_size ? std::string("more than 2^63")
                                                                       : std::to_string(count * elem_size)));
    return {};
  }
  const TypedField field = TypedFieldOf(p, *dtype);
  if (field.size != count)
    return InvalidArgument(fmt::format("{}: {} has {} elements, shape {} needs {}", label, field.name, field.size,
                                       ShapeToString(shape), count));
  return {};
}

}  // namespace

Status CheckTensorSizes(const onnx::GraphProto& graph) {
  for (const auto& t : graph.initializer())
    PARITY_RETURN_IF_ERROR(CheckDeclaredSize(t, fmt::format("initializer '{}'", t.name())));
  for (const auto& n : graph.node()) {
    for (const auto& a : n.attribute()) {
      const std::string label = fmt::format("node '{}' ({}), attribute '{}'", n.name(), n.op_type(), a.name());
      if (a.has_t()) PARITY_RETURN_IF_ERROR(CheckDeclaredSize(a.t(), label));
      for (const auto& t : a.tensors()) PARITY_RETURN_IF_ERROR(CheckDeclaredSize(t, label));
      if (a.has_g()) PARITY_RETURN_IF_ERROR(CheckTensorSizes(a.g()));
      for (const auto& g : a.graphs()) PARITY_RETURN_IF_ERROR(CheckTensorSizes(g));
    }
  }
  return {};
}

Result<Tensor> TensorFromProto(const onnx::TensorProto& p) {
  const std::string label = p.name().empty() ? std::string("tensor") : fmt::format("tensor '{}'", p.name());
  PARITY_ASSIGN_OR_RETURN(const DType dtype, ReadableDType(p, label));
  // The data held matches the dims (strings, raw bytes or the typed field).
  PARITY_RETURN_IF_ERROR(CheckDeclaredSize(p, label));
  Shape shape(p.dims().begin(), p.dims().end());
  if (dtype == DType::kString)
    return Tensor::FromStrings(std::move(shape), {p.string_data().begin(), p.string_data().end()});
  PARITY_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype, std::move(shape)));
  if (p.has_raw_data()) {
    if (!p.raw_data().empty()) std::memcpy(t.mutable_data(), p.raw_data().data(), p.raw_data().size());
    return t;
  }
  CopyTypedField(p, t);
  return t;
}

onnx::TensorProto TensorToProto(const std::string& name, const Tensor& tensor) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(DTypeToOnnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) p.add_dims(d);
  if (tensor.dtype() == DType::kString) {
    for (const auto& s : tensor.strings()) p.add_string_data(s);
  } else {
    p.set_raw_data(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
  }
  return p;
}

}  // namespace onnx_adapter

Result<Tensor> ReadTensorProtoFile(const fs::path& path, std::string* name_out) {
  PARITY_ASSIGN_OR_RETURN(std::string bytes,
                          onnx_adapter::ReadFileLimited(path, onnx_adapter::kMaxProtoBytes));
  if (bytes.empty()) return InvalidArgument(fmt::format("{}: empty file, not a TensorProto", path.string()));
  onnx::TensorProto proto;
  try {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    in.SetTotalBytesLimit(INT_MAX);
    if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      return InvalidArgument(
          fmt::format("{}: not a valid TensorProto (protobuf parse failed)", path.string()));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("{}: not a valid TensorProto ({})", path.string(), e.what()));
  }
  if (name_out) *name_out = proto.name();
  return WithContext(onnx_adapter::TensorFromProto(proto), path.string());
}

Status WriteTensorProtoFile(const fs::path& path, const std::string& name, const Tensor& tensor) {
  const onnx::TensorProto proto = onnx_adapter::TensorToProto(name, tensor);
  if (proto.ByteSizeLong() > static_cast<size_t>(onnx_adapter::kMaxProtoBytes))
    return Unsupported(fmt::format("{}: tensor '{}' is over protobuf's 2 GiB limit", path.string(), name));
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return InternalError("protobuf failed to serialize a TensorProto");
  return WriteFileAtomic(path, bytes);
}

Result<TestDataSet> ReadTestDataSet(const fs::path& dir, const std::vector<std::string>& input_names,
                                    const std::vector<std::string>& output_names) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound(fmt::format("{}: no such directory", dir.string()));
  TestDataSet set;
  const auto read_all = [&](const char* prefix, const std::vector<std::string>& names,
                            TensorSet& out) -> Status {
    for (size_t i = 0;; ++i) {
      const fs::path file = dir / fmt::format("{}_{}.pb", prefix, i);
      if (!fs::exists(file, ec)) return {};
      std::string name;
      PARITY_ASSIGN_OR_RETURN(Tensor t, ReadTensorProtoFile(file, &name));
      if (name.empty()) {
        if (i >= names.size())
          return InvalidArgument(fmt::format("{}: the tensor has no name and the model has only {} {}s",
                                             file.string(), names.size(), prefix));
        name = names[i];
      }
      PARITY_RETURN_IF_ERROR(WithContext(out.Add(name, std::move(t)), file.string()));
    }
  };
  PARITY_RETURN_IF_ERROR(read_all("input", input_names, set.inputs));
  PARITY_RETURN_IF_ERROR(read_all("output", output_names, set.outputs));
  return set;
}

}  // namespace parity
