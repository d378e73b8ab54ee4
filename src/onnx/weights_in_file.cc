#include "onnx/weights_in_file.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "onnx/external_data.h"

namespace parity::onnx_adapter {

namespace {

// Field numbers of onnx.proto3 this reads.
constexpr uint32_t kModelGraph = 7;          // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;    // GraphProto.initializer
constexpr uint32_t kTensorRawData = 9;       // TensorProto.raw_data
constexpr uint32_t kTensorExternalData = 13; // TensorProto.external_data
constexpr uint32_t kTensorDataLocation = 14; // TensorProto.data_location

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// One field of a message, as offsets into the file: its whole encoding
// [begin, end) and, when length-delimited, where its payload starts.
struct Field {
  uint32_t number = 0;
  int wire = 0;
  size_t begin = 0, end = 0, payload = 0;
};

// The fields of the message encoded in bytes[begin, end); false when one is
// malformed or a group (deprecated, never written by onnx).
bool ReadFields(std::string_view bytes, size_t begin, size_t end, std::vector<Field>& out) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()) + begin,
                                            static_cast<int>(end - begin));
  in.SetTotalBytesLimit(INT_MAX);
  while (begin + static_cast<size_t>(in.CurrentPosition()) < end) {
    Field f;
    f.begin = begin + static_cast<size_t>(in.CurrentPosition());
    const uint32_t tag = in.ReadTag();
    f.number = tag >> 3;
    f.wire = static_cast<int>(tag & 7);
    if (f.number == 0) return false;
    bool ok = false;
    switch (f.wire) {
      case kVarint: {
        uint64_t ignored = 0;
        ok = in.ReadVarint64(&ignored);
        break;
      }
      case kFixed64:
        ok = in.Skip(8);
        break;
      case kLengthDelimited: {
        uint32_t length = 0;
        ok = in.ReadVarint32(&length) && length <= static_cast<uint32_t>(INT_MAX);
        f.payload = begin + static_cast<size_t>(in.CurrentPosition());
        ok = ok && in.Skip(static_cast<int>(length));
        break;
      }
      case kFixed32:
        ok = in.Skip(4);
        break;
      default:
        return false;
    }
    if (!ok) return false;
    f.end = begin + static_cast<size_t>(in.CurrentPosition());
    out.push_back(f);
  }
  return true;
}

template <typename Message>
bool ParseWhole(Message& m, std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Whether `length` bytes are exactly what `t`'s dims and dtype declare (else
// the tensor stays inline and the usual checks report it).
bool IsExactSize(const onnx::TensorProto& t, size_t length) {
  const auto dtype = DTypeFromOnnx(t.data_type());
  if (!dtype || *dtype == DType::kString) return false;
  const auto count = ElementCount(Shape(t.dims().begin(), t.dims().end()));
  return count && static_cast<size_t>(*count) * DTypeSize(*dtype) == length;
}

}  // namespace

std::optional<onnx::ModelProto> ParseLeavingWeightsInFile(std::string_view bytes, const std::string& location,
                                                          int64_t keep_from) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return std::nullopt;
  std::vector<Field> fields;
  if (!ReadFields(bytes, 0, bytes.size(), fields)) return std::nullopt;
  // Every field but the graph, in file order (a repeated field keeps its order).
  std::string model_rest;
  const Field* graph = nullptr;
  for (const Field& f : fields) {
    if (f.number != kModelGraph) {
      model_rest.append(bytes.substr(f.begin, f.end - f.begin));
    } else if (graph != nullptr || f.wire != kLengthDelimited) {
      return std::nullopt;  // two graph fields merge: left to protobuf
    } else {
      graph = &f;
    }
  }
  if (graph == nullptr) return std::nullopt;

  std::vector<Field> graph_fields;
  if (!ReadFields(bytes, graph->payload, graph->end, graph_fields)) return std::nullopt;
  std::string graph_rest;
  std::vector<onnx::TensorProto> initializers;
  bool left_any = false;
  for (const Field& f : graph_fields) {
    if (f.number != kGraphInitializer) {
      graph_rest.append(bytes.substr(f.begin, f.end - f.begin));
      continue;
    }
    if (f.wire != kLengthDelimited) return std::nullopt;
    std::vector<Field> tensor_fields;
    if (!ReadFields(bytes, f.payload, f.end, tensor_fields)) return std::nullopt;
    const Field* raw = nullptr;
    int raws = 0;
    for (const Field& t : tensor_fields) {
      if (t.number == kTensorExternalData || t.number == kTensorDataLocation) return std::nullopt;
      if (t.number == kTensorRawData) {
        ++raws;
        raw = &t;
      }
    }
    const bool leave = raws == 1 && raw->wire == kLengthDelimited &&
                       static_cast<int64_t>(raw->end - raw->payload) >= keep_from;
    std::string kept;
    if (leave) {
      for (const Field& t : tensor_fields)
        if (&t != raw) kept.append(bytes.substr(t.begin, t.end - t.begin));
    } else {
      kept.assign(bytes.substr(f.payload, f.end - f.payload));
    }
    onnx::TensorProto& tensor = initializers.emplace_back();
    if (!ParseWhole(tensor, kept)) return std::nullopt;
    if (!leave) continue;
    const size_t length = raw->end - raw->payload;
    if (IsExactSize(tensor, length)) {
      SetExternalData(tensor, location, raw->payload, length);
      left_any = true;
    } else {
      tensor.set_raw_data(std::string(bytes.substr(raw->payload, length)));
    }
  }
  if (!left_any) return std::nullopt;

  onnx::ModelProto model;
  onnx::GraphProto graph_proto;
  if (!ParseWhole(model, model_rest) || !ParseWhole(graph_proto, graph_rest)) return std::nullopt;
  graph_proto.mutable_initializer()->Reserve(static_cast<int>(initializers.size()));
  for (auto& t : initializers) *graph_proto.add_initializer() = std::move(t);
  *model.mutable_graph() = std::move(graph_proto);
  return model;
}

}  // namespace parity::onnx_adapter
