#include "onnx/shape_guard.h"

#include <fmt/format.h>

#include <unordered_map>

namespace parity::onnx_adapter {
namespace {

using Ranks = std::unordered_map<std::string, int>;

void Walk(const onnx::GraphProto& g, Ranks ranks, std::vector<std::string>& out) {
  for (const auto& v : g.input())
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  for (const auto& t : g.initializer()) ranks[t.name()] = t.dims_size();
  auto rank = [&](const onnx::NodeProto& n, int i) -> int {
    if (i >= n.input_size() || n.input(i).empty()) return -1;
    auto it = ranks.find(n.input(i));
    return it == ranks.end() ? -1 : it->second;
  };
  for (const auto& n : g.node()) {
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    const std::string where = fmt::format("node '{}' ({})", n.name(), n.op_type());
    if (default_domain && (n.op_type() == "Conv" || n.op_type() == "ConvTranspose" || n.op_type() == "ConvInteger")) {
      const int x = rank(n, 0), w = rank(n, 1), b = n.op_type() == "ConvInteger" ? -1 : rank(n, 2);
      if (w >= 0 && w < 3)
        out.push_back(fmt::format("{}: weight has rank {}, a convolution needs at least 3", where, w));
      else if (w >= 0 && x >= 0 && w != x)
        out.push_back(fmt::format("{}: weight has rank {}, its input rank {}", where, w, x));
      if (b >= 0 && b != 1) out.push_back(fmt::format("{}: bias has rank {}, not 1", where, b));
    }
    if (default_domain && n.op_type() == "Gemm") {
      const int a = rank(n, 0), bb = rank(n, 1), c = rank(n, 2);
      if ((a >= 0 && a != 2) || (bb >= 0 && bb != 2) || c > 2)
        out.push_back(fmt::format("{}: A and B must have rank 2 and C at most 2 (ranks {}, {}, {})", where, a,
                                  bb, c));
    }
    for (const auto& attr : n.attribute()) {
      if (attr.has_g()) Walk(attr.g(), ranks, out);
      for (const auto& sg : attr.graphs()) Walk(sg, ranks, out);
    }
  }
}

}  // namespace

std::vector<std::string> ShapeInferenceHazards(const onnx::ModelProto& model) {
  std::vector<std::string> out;
  if (model.has_graph()) Walk(model.graph(), {}, out);
  return out;
}

}  // namespace parity::onnx_adapter
