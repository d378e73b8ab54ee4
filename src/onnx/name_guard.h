// Names a model may carry (internal to src/onnx). Every report, console line
// and message repeats a model's names, some of them dozens of times: two
// output names of 1 MB made 177 MB of reports, 4000 names of 10 KB ran a
// check out of memory. A name longer than kMaxNameBytes is refused at load.
#pragma once

#include <onnx/onnx_pb.h>

#include "core/status.h"

namespace parity::onnx_adapter {

// Every name of the model: nodes and the tensors they read and write, graph
// inputs, outputs, initializers (sparse too) and value_info, in subgraphs and
// local functions too. kInvalidArgument naming the first that is longer than
// kMaxNameBytes (shown by its first bytes and a hash) and what it names.
// Each name longer than kMaxShownNameBytes is remembered for the writers
// (RememberLongName, core/short_name.h).
Status CheckNameLengths(const onnx::ModelProto& model);

}  // namespace parity::onnx_adapter
