#include "onnx/validate.h"

#include <fmt/format.h>
#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/util/field_mask_util.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <optional>

#include "core/build_info.h"
#include "onnx/model_internal.h"
#include "onnx/graph.h"
#include "onnx/shape_guard.h"

namespace parity {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      break;
  }
  return "info";
}

namespace {

// Why the ONNX library cannot judge this model, or "" when it can.
std::string CheckerSkipReason(const onnx::ModelProto& p) {
  if (p.ir_version() > CheckerMaxIrVersion())
    return fmt::format("checker skipped: model has IR version {}, newer than ONNX {} knows (<= {})",
                       p.ir_version(), PARITY_ONNX_VERSION, CheckerMaxIrVersion());
  const int64_t opset = onnx_adapter::DefaultOpset(p);
  if (opset > CheckerMaxOpset())
    return fmt::format("checker skipped: model uses opset {}, newer than ONNX {} knows (<= {})", opset,
                       PARITY_ONNX_VERSION, CheckerMaxOpset());
  return {};
}

// What the checker judges. It resolves an external location against the
// working directory when it has no model folder (check_model on a proto),
// so a model with tensors still external (read in place: Model::
// external_data_dir) is judged as a copy whose locations start with '#', a
// location the checker does not stat: parity checked those files at load
// (external_data.cc). The copy is small: external tensors hold no bytes.
// `storage` keeps it; the model's own proto otherwise.
const onnx::ModelProto& ForChecker(const Model& m, std::optional<onnx::ModelProto>& storage) {
  if (m.external_data_dir().empty()) return onnx_adapter::Proto(m);
  storage.emplace(onnx_adapter::Proto(m));
  for (auto& t : *storage->mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (auto& kv : *t.mutable_external_data())
      if (kv.key() == "location") kv.set_value("#" + kv.value());
  }
  return *storage;
}

// The model without the bytes of its large initializers (kStructureKeepsBelow
// or more: the weights), for ONNX's shape inference, which reads the data
// of small constant inputs only (shapes, axes, pads) and otherwise types and
// dims. Copying a 500 MB model whole for it was most of the cost of Check
// and of every GraphView (3 of them in `baseline`). A large initializer
// keeps an empty raw_data field, so it still holds one value field.
constexpr size_t kStructureKeepsBelow = size_t{1} << 20;

bool IsLarge(const onnx::TensorProto& t) { return t.raw_data().size() >= kStructureKeepsBelow; }

google::protobuf::FieldMask AllFieldsBut(const google::protobuf::Descriptor* d, std::string_view skip,
                                         const std::string& prefix = "") {
  google::protobuf::FieldMask mask;
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->name() != skip) mask.add_paths(prefix + std::string(d->field(i)->name()));
  return mask;
}

onnx::ModelProto StructureCopy(const onnx::ModelProto& p) {
  using google::protobuf::util::FieldMaskUtil;
  bool any = false;
  for (const auto& t : p.graph().initializer()) any |= IsLarge(t);
  if (!any) return p;
  onnx::ModelProto out;
  google::protobuf::FieldMask mask = AllFieldsBut(onnx::ModelProto::descriptor(), "graph");
  mask.MergeFrom(AllFieldsBut(onnx::GraphProto::descriptor(), "initializer", "graph."));
  FieldMaskUtil::MergeMessageTo(p, mask, {}, &out);
  const google::protobuf::FieldMask tensor_mask = AllFieldsBut(onnx::TensorProto::descriptor(), "raw_data");
  for (const auto& t : p.graph().initializer()) {
    onnx::TensorProto* c = out.mutable_graph()->add_initializer();
    if (!IsLarge(t)) {
      *c = t;
      continue;
    }
    FieldMaskUtil::MergeMessageTo(t, tensor_mask, {}, c);
    c->set_raw_data(std::string());
  }
  return out;
}

// The ONNX standard's own domains: an op there without a schema is unknown
// to ONNX (ORT registers some there: SimplifiedLayerNormalization).
bool IsStandardDomain(const std::string& d) { return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml"; }
bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

int64_t DomainVersion(const onnx::ModelProto& p, const std::string& domain) {
  for (const auto& o : p.opset_import())
    if (o.domain() == domain || (IsDefaultDomain(o.domain()) && IsDefaultDomain(domain))) return o.version();
  return 0;
}

// Whether ONNX defines node `n`'s op (ai.onnx.ml counted as defined: the
// checker judges it).
bool OnnxDefines(const onnx::ModelProto& proto, const onnx::NodeProto& n) {
  if (!IsStandardDomain(n.domain())) return false;
  if (!IsDefaultDomain(n.domain())) return true;
  return onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(DomainVersion(proto, n.domain())), "") !=
         nullptr;
}

// Where the checker's copy puts ops ONNX does not define: a domain it skips.
constexpr char kRuntimeDomain[] = "parity.runtime_registered";

// One finding per op ONNX does not define (top-level graph), in first-seen
// order; the default domain's unknown ops are moved to kRuntimeDomain in
// `storage` (a copy of `proto`, made when needed) so that the checker judges
// the rest of the graph. Returns the proto the checker should judge.
const onnx::ModelProto& SetRuntimeOpsAside(const onnx::ModelProto& proto, std::optional<onnx::ModelProto>& storage,
                                           std::vector<Finding>& findings) {
  struct Op {
    std::string domain, op_type;
    int64_t version = 0;
    int nodes = 0;
  };
  std::vector<Op> ops;
  std::vector<int> moved;  // node indices
  const auto& nodes = proto.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    const int64_t version = DomainVersion(proto, n.domain());
    const bool standard = IsStandardDomain(n.domain());
    if (OnnxDefines(proto, n)) continue;
    if (standard) moved.push_back(i);
    auto it = std::find_if(ops.begin(), ops.end(),
                           [&](const Op& o) { return o.domain == n.domain() && o.op_type == n.op_type(); });
    if (it == ops.end()) it = ops.insert(ops.end(), {n.domain(), n.op_type(), version, 0});
    ++it->nodes;
  }
  for (const Op& o : ops) {
    const bool standard = IsStandardDomain(o.domain);
    const std::string where = fmt::format("{} node{}", o.nodes, o.nodes == 1 ? "" : "s");
    findings.push_back(
        standard ? Finding{Severity::kError, "checker",
                           fmt::format("No Op registered for {} with domain_version of {} ({}): not an op of the "
                                       "ONNX standard; only a runtime that registers it can run it",
                                       o.op_type, o.version, where),
                           true}
                 : Finding{Severity::kInfo, "checker",
                           fmt::format("{}.{} ({}, opset {}): an op of domain '{}', which ONNX does not define; "
                                       "only a runtime that registers it can run it",
                                       o.domain, o.op_type, where, o.version, o.domain),
                           true});
  }
  if (moved.empty()) return proto;
  if (!storage) storage.emplace(proto);
  for (int i : moved) storage->mutable_graph()->mutable_node(i)->set_domain(kRuntimeDomain);
  auto* import = storage->add_opset_import();
  import->set_domain(kRuntimeDomain);
  import->set_version(1);
  return *storage;
}

// Runs `fn`, turning anything thrown into a message.
template <typename Fn>
std::string CatchAll(Fn&& fn) {
  try {
    fn();
  } catch (const onnx::checker::ValidationError& e) {
    return e.what();
  } catch (const onnx::InferenceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
  return {};
}

}  // namespace

int64_t CheckerMaxIrVersion() { return onnx::Version::IR_VERSION; }

int64_t CheckerMaxOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

std::vector<Finding> Check(const Model& m) {
  std::vector<Finding> findings;
  if (!m.valid()) return {{Severity::kError, "checker", "empty model"}};
  std::optional<onnx::ModelProto> storage;
  const auto& proto = SetRuntimeOpsAside(ForChecker(m, storage), storage, findings);

  // Nodes shape inference would crash on, checker or not (onnx/onnx#6180).
  const auto hazards = onnx_adapter::ShapeInferenceHazards(proto);
  for (const auto& h : hazards) findings.push_back({Severity::kError, "structure", h});
  const std::string skip = CheckerSkipReason(proto);
  if (!skip.empty()) {
    findings.push_back({Severity::kInfo, "checker", skip});
  } else if (std::string err = CatchAll([&] { onnx::checker::check_model(proto); }); !err.empty()) {
    findings.push_back({Severity::kError, "checker", err});
    // ONNX's shape inference has dereferenced bad pointers on models the
    // checker refuses (fuzz/crashes/model_conv_shape_inference_segv.onnx, with
    // ONNX 1.12): a crash there would hide every finding, so it does not run.
    findings.push_back({Severity::kInfo, "shape_inference", "skipped: the checker found errors"});
    return findings;
  }
  if (!hazards.empty()) {
    findings.push_back({Severity::kInfo, "shape_inference", "skipped: malformed nodes it could crash on"});
    return findings;
  }

  onnx::ModelProto copy = StructureCopy(proto);
  const Severity shape_severity = skip.empty() ? Severity::kError : Severity::kWarning;
  const std::string err = CatchAll([&] {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  });
  if (!err.empty()) {
    findings.push_back({shape_severity, "shape_inference", fmt::format("shape inference failed: {}", err)});
    return findings;
  }
  // Which graph outputs still have no element type after inference.
  std::unordered_set<std::string> typed;
  for (const auto& v : copy.graph().value_info())
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) typed.insert(v.name());
  for (const auto& v : copy.graph().output())
    if (!(v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) && !typed.contains(v.name()))
      findings.push_back(
          {Severity::kWarning, "shape_inference",
           fmt::format("graph output '{}' has no declared or inferred element type", v.name())});
  return findings;
}

namespace {

// Shape inference (lenient) on `proto`, after the checks WithInferredShapes
// documents.
Status InferLeniently(const Model& m, onnx::ModelProto& copy) {
  std::optional<onnx::ModelProto> storage;
  std::vector<Finding> runtime_ops;  // said by Check
  const auto& proto = SetRuntimeOpsAside(ForChecker(m, storage), storage, runtime_ops);
  if (const auto hazards = onnx_adapter::ShapeInferenceHazards(proto); !hazards.empty())
    return InvalidArgument(fmt::format("shape inference not run: {}", hazards.front()));
  if (CheckerSkipReason(proto).empty()) {
    if (std::string err = CatchAll([&] { onnx::checker::check_model(proto); }); !err.empty())
      return InvalidArgument(fmt::format("shape inference not run: the ONNX checker refuses the model: {}", err));
  }
  const std::string err = CatchAll([&] {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  });
  if (!err.empty()) return InvalidArgument(fmt::format("shape inference failed: {}", err));
  return {};
}

}  // namespace

Result<Model> WithInferredShapes(const Model& m) {
  if (!m.valid()) return InternalError("WithInferredShapes on an empty model");
  // Shape inference can crash on models the checker refuses (see Check), so
  // it runs only on models the checker accepts or cannot judge.
  Model copy = m.Clone();
  PARITY_RETURN_IF_ERROR(InferLeniently(m, onnx_adapter::MutableProto(copy)));
  return copy;
}

std::vector<std::string> RuntimeOpNodes(const Model& m) {
  std::vector<std::string> out;
  if (!m.valid()) return out;
  const auto& proto = onnx_adapter::Proto(m);
  const std::vector<std::string> names = NodeNames(m);
  for (int i = 0; i < proto.graph().node_size(); ++i)
    if (!OnnxDefines(proto, proto.graph().node(i)) && static_cast<size_t>(i) < names.size()) out.push_back(names[i]);
  return out;
}

Result<Model> InferredStructure(const Model& m) {
  if (!m.valid()) return InternalError("InferredStructure on an empty model");
  onnx::ModelProto copy = StructureCopy(onnx_adapter::Proto(m));
  PARITY_RETURN_IF_ERROR(InferLeniently(m, copy));
  return onnx_adapter::FromProto(std::move(copy));
}

}  // namespace parity
