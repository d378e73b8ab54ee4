// An ONNX model held in memory: the only owner of a ModelProto in parity.
//
// Load() reads a `.onnx` file, checks tensors stored as external data
// (`data_location == EXTERNAL`, paths relative to the model's directory:
// inside it, regular files, each tensor's bytes within its file and of the
// size its dims declare) without reading the large ones, which stay
// references read in place (external_data_dir()), and checks the structure enough that later stages can trust it:
// the bytes parse, there is a graph and an opset import, every node input is
// produced by a node, a graph input or an initializer.
//
// Callers see no protobuf type. The adapter's own code reaches the proto
// through onnx/model_internal.h.
//
// Thread-safety: const methods may be called concurrently; a Model is not
// safe for concurrent mutation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace onnx {
class ModelProto;
}

namespace parity {

namespace onnx_adapter {
struct ModelAccess;
}

// Limits on what a model may declare (docs/security.md "Limits"): beyond them
// ORT's session creation takes minutes (a Split with 100,000 outputs) and the
// model is refused at load (kInvalidArgument) instead.
inline constexpr int kMaxNodeOutputs = 10000;    // outputs of one node
inline constexpr int kMaxGraphOutputs = 10000;   // outputs of the main graph
// External initializers of at least this many bytes stay references at load
// (read in place); smaller ones are read into memory (shape tensors that
// ONNX's shape inference reads).
inline constexpr int64_t kInlineExternalBelow = 64 * 1024;

struct SaveOptions {
  enum class ExternalData {
    kAuto,    // external when the model was loaded with external data, or would exceed 2 GiB
    kNever,   // everything inline; fails when the serialized model exceeds 2 GiB
    kAlways,  // initializers of at least `size_threshold` bytes go external
  };
  ExternalData external_data = ExternalData::kAuto;
  // Tensors smaller than this stay inline even when saving external data.
  int64_t size_threshold = 1024;
};

struct LoadOptions {
  // False: tensors stored as external data are left as references, not read
  // (nor their files checked). Such a model is for reading the graph's
  // structure only: Serialize() output would reference files ORT cannot find.
  bool external_data = true;
};

class Model {
 public:
  // An empty model (no graph); only useful as a target for assignment.
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Loads `path`. External data is checked (its files are found relative to
  // the model's directory and may not lie outside it); tensors under
  // kInlineExternalBelow bytes, sparse ones and those of attributes are read
  // into memory, the large initializers of the main graph stay references
  // to their files (external_data_dir()), read by ORT or by the adapter's
  // bounded reader when a value is needed (ReadInitializer, Save, Serialize).
  // Inline weights are treated alike: the main graph's initializers whose
  // raw_data holds at least kInlineExternalBelow bytes are not copied into
  // the parsed model but become references to where they lie in `path`
  // itself (weights_in_file(); onnx/weights_in_file.h), so parity holds the
  // graph and every ORT session reads the weights from the file in place.
  // Errors (each message starts with the path):
  //   kNotFound        the file or an external data file does not exist;
  //   kInvalidArgument "not a valid ONNX model (...)": empty file, protobuf
  //                    parse failed (truncated, random bytes), no graph, no
  //                    opset import; a file over 2 GiB;
  //                    node 'N' (Op) reads tensor 'T' that nothing produces;
  //   kCorrupt         external data outside its file or of the wrong size.
  static Result<Model> Load(const std::filesystem::path& path, const LoadOptions& options = {});

  // Parses serialized bytes. `source` names them in error messages;
  // external data, if any, is resolved relative to `base_dir` (none when empty).
  static Result<Model> FromBytes(std::string_view bytes, std::string_view source = "<memory>",
                                 const std::filesystem::path& base_dir = {});

  // The model serialized with all data inline (what ORT can load from memory);
  // external tensors are read from their files for it. Fails (kUnsupported)
  // when that exceeds protobuf's 2 GiB limit.
  Result<std::string> Serialize() const;

  // The model serialized with the tensors that are still external data left
  // as references to files in external_data_dir() (ORT loads such bytes with
  // that folder as its external-data folder: ort::ModelSource). The same as
  // Serialize() for a model without external references.
  Result<std::string> SerializeKeepingExternalData() const;

  // Writes the model to `path`, atomically. With external data, the tensors go
  // to `<file name>.data` next to `path` (replaced atomically too) and are
  // referenced by that relative name, so the pair can be moved together.
  Status Save(const std::filesystem::path& path, const SaveOptions& options = {}) const;

  // A deep copy.
  Model Clone() const;

  // The path Load() read, empty for models from bytes or the builder.
  const std::filesystem::path& path() const { return path_; }
  // True when Load()/FromBytes() resolved external data (the file's own
  // weights left in it do not count: the file had none).
  bool had_external_data() const { return had_external_data_; }
  // True when Load() left the file's inline weights in it (see Load).
  bool weights_in_file() const { return weights_in_file_; }
  // The file Load() read while the model is still exactly that file's (no
  // edit has reached it, nor a clone of it); empty otherwise, and empty
  // when its weights were left in the file (weights_in_file()). A runtime
  // can then read the file itself instead of a serialized copy held in
  // memory (engine/runner/session_run.h: SourceOf).
  const std::filesystem::path& unmodified_file() const {
    static const std::filesystem::path kNone;
    return unmodified_ ? path_ : kNone;
  }
  // The folder the model's external tensors are read from, while some are
  // still references (canonical); empty when every tensor is in memory.
  const std::filesystem::path& external_data_dir() const { return external_dir_; }
  // False only for a default-constructed Model.
  bool valid() const { return proto_ != nullptr; }

 private:
  friend struct onnx_adapter::ModelAccess;
  // `self_location` non-empty: the file name the bytes are read from, in
  // base_dir, whose large inline weights are then left there
  // (onnx/weights_in_file.h).
  static Result<Model> Parse(std::string_view bytes, std::string_view source, const std::filesystem::path& base_dir,
                             bool external_data, const std::string& self_location);

  std::unique_ptr<onnx::ModelProto> proto_;
  std::filesystem::path path_;
  bool had_external_data_ = false;
  std::filesystem::path external_dir_;  // non-empty while external references remain
  bool unmodified_ = false;  // set by Load, cleared by MutableProto (model_internal.h)
  bool weights_in_file_ = false;  // Load left the inline weights in the file (references to it)
};

}  // namespace parity
