// Loaders that derive a new model from another (Polygraphy's "loader"
// idea): expose intermediates as outputs, cut out a region, plant faults.
// Every function leaves its argument untouched and returns a new Model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"

namespace parity {

// Adds `tensor_names` (node outputs) as graph outputs after the existing ones,
// in the order given; names already outputs are skipped. Each new output
// carries its type (element type and shape, as far as known) when the model
// declares it in value_info or ONNX shape inference finds it; otherwise only
// its name. ONNX Runtime 1.29 accepts name-only outputs (checked: the
// transformer builtin with all 110 intermediates exposed, name-only, runs at
// ORT_DISABLE_ALL and ORT_ENABLE_ALL), and a declared shape that differs from
// the real one is only a warning there. (The ONNX checker wants a shape on every graph output, so a
// model with name-only outputs fails the checker but still runs.) Errors: kNotFound naming a tensor no node
// produces.
Result<Model> WithExtraOutputs(const Model& m, const std::vector<std::string>& tensor_names);

// WithExtraOutputs(m, tensor_names).Serialize(), given `serialized` ==
// m.Serialize(), without copying or serializing the model again: the added
// outputs are serialized as a model of their own and appended, and protobuf
// merges a message appended to another (repeated fields concatenate), so ORT
// parses the result as the model with those outputs. Same errors as
// WithExtraOutputs.
Result<std::string> SerializeWithExtraOutputs(const Model& m, std::string_view serialized,
                                              const std::vector<std::string>& tensor_names);

// A standalone model of the nodes needed to compute `outputs` from `inputs`:
// walking back from each output, a tensor is either a region input, an
// initializer (kept), or produced by a node (kept, with its Constant
// producers). Region inputs that are initializers stay initializers. Inputs
// get their declared or inferred type and shape; outputs their type when
// known; the kept intermediates with a known type are declared in value_info
// (so that cutting a region out of a region needs no shape inference, which
// runs only when an input or output has no declared type). Opsets, IR
// version and local functions are copied.
// Errors: kNotFound for an unknown tensor name; kInvalidArgument when the
// region is open (needs a graph input not among `inputs`, naming it);
// kUnsupported when the type of an input is unknown.
Result<Model> ExtractRegion(const Model& m, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs);

// The value of initializer `name` (kNotFound when there is none).
Result<Tensor> ReadInitializer(const Model& m, const std::string& name);

// Replaces initializer `name` with `value` (dtype and shape may change).
Result<Model> ReplaceInitializer(const Model& m, const std::string& name, const Tensor& value);

// Multiplies every element of a floating-point initializer by `factor`:
// a planted fault for tests and the demo. kUnsupported for other dtypes.
Result<Model> ScaleInitializer(const Model& m, const std::string& name, double factor);

// Changes the op type (and domain) of the node named `node_name` (names as in
// graph.h, synthesized ones included). Attributes are kept; pick an op that
// accepts them. kNotFound when no node has that name.
Result<Model> ReplaceNodeOp(const Model& m, const std::string& node_name, const std::string& new_op_type,
                            const std::string& new_domain = "");

// The model with a lower precision's rounding emulated (edit_round.cc):
// every float32 tensor of the top-level graph (inputs, initializers, node
// outputs of a declared or inferred float32 type) is cast to `format` and
// back before any node reads it; every tensor keeps its name and holds what
// its producer computed from rounded operands, in float32. Subgraphs read
// the unrounded values. `format`: kBFloat16 or kFloat16 (else
// kInvalidArgument).
Result<Model> WithFloatsRounded(const Model& m, DType format);

// Writes the names graph.h gives nodes (unique, synthesized where empty) into
// the model, so that ONNX Runtime reports the same names parity uses.
Model WithNodeNames(const Model& m);
// True when every node of `m` already carries the name graph.h gives it
// (WithNodeNames would change nothing).
bool HasNodeNames(const Model& m);

}  // namespace parity
