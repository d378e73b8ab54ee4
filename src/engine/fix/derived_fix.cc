// The nodes to keep in float when an int8 (QDQ) or float16 copy fails
// against its float model: the copy re-made by python/parity/_fix_driver.py
// with them excluded, and checked (fix.h).
#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/child_process.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "core/shell_word.h"
#include "engine/fix/fix_internal.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace fs = std::filesystem;

namespace parity::fix_internal {
namespace {

// The driver once: writes `request`, runs it, returns its last stdout line's
// object ({"ok": ..., "error" | "settings"}).
Result<nlohmann::json> RunDriver(const FixOptions& o, const fs::path& request_path, const nlohmann::json& request) {
  PARITY_RETURN_IF_ERROR(WriteJsonFile(request_path, request));
  const std::string boot =
      "import sys; p = sys.argv.pop(1)\nif p: sys.path.insert(0, p)\n"
      "from parity._fix_driver import main; sys.exit(main(sys.argv[1:]))";
  PARITY_ASSIGN_OR_RETURN(ChildProcess child,
                          ChildProcess::Start({o.python, "-c", boot, o.pythonpath, request_path.string()}));
  std::string line, last;
  const auto deadline = ChildProcess::Clock::now() + std::chrono::minutes(30);
  for (;;) {
    const auto got = child.ReadLine(line, 1 << 20, deadline);
    if (got == ChildProcess::Got::kLine && !line.empty()) last = line;
    if (got == ChildProcess::Got::kEnd || got == ChildProcess::Got::kTimeout) break;
  }
  const std::string words = child.LastWords();
  const int status = child.Stop();
  auto j = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ok"))
    return RuntimeError(fmt::format("the fix driver ({} -m parity._fix_driver) gave no answer (wait status {}): {}",
                                    o.python, status, words.empty() ? "no output" : words));
  return j;
}

// Nodes one step further along the float graph, walking through nodes that
// cannot be changed (a Relu the quantizer folded into its Q) to the next
// that can.
Grow GraphGrow(const GraphView& g, const std::set<std::string>& eligible) {
  return [&g, eligible](const std::vector<std::string>& current) {
    std::vector<std::string> more;
    std::set<size_t> seen;
    std::deque<size_t> todo;
    for (const auto& c : current)
      if (auto i = g.FindNode(c)) { todo.push_back(*i); seen.insert(*i); }
    while (!todo.empty()) {
      const GraphNode& n = g.nodes[todo.front()];
      todo.pop_front();
      std::vector<size_t> next;
      for (const auto& t : n.inputs)
        if (auto it = g.producer.find(t); it != g.producer.end()) next.push_back(it->second);
      for (const auto& t : n.outputs)
        if (auto it = g.consumers.find(t); it != g.consumers.end()) next.insert(next.end(), it->second.begin(), it->second.end());
      for (size_t i : next) {
        if (!seen.insert(i).second) continue;
        if (eligible.contains(g.nodes[i].name)) more.push_back(g.nodes[i].name);
        else todo.push_back(i);  // pass through it
      }
    }
    return more;
  };
}

// Where the search starts: the quantization finding (a clipping quantizer,
// a float16 overflow), else the top culprit's nodes, else the layer that
// loses the most on its own.
std::vector<std::string> Seeds(const CheckReport& base, const std::set<std::string>& eligible) {
  std::vector<std::string> seeds;
  auto add = [&](const std::string& n) {
    if (eligible.contains(n) && std::find(seeds.begin(), seeds.end(), n) == seeds.end()) seeds.push_back(n);
  };
  if (base.quant && base.quant->clipped) add(base.quant->clipped->node);
  if (base.quant && base.quant->overflow) add(base.quant->overflow->node);
  if (seeds.empty() && base.locate && !base.locate->culprits.empty())
    for (const auto& n : base.locate->culprits.front().covers) add(n);
  if (seeds.empty() && base.quant) {
    const QuantLayer* worst = nullptr;
    for (const auto& l : base.quant->layers)
      if (l.local.measured && eligible.contains(l.node) && (!worst || l.local.sqnr_db < worst->local.sqnr_db)) worst = &l;
    if (worst) add(worst->node);
  }
  return seeds;
}

Result<std::vector<std::string>> Calibration(const FixOptions& o) {
  std::vector<std::string> files;
  for (const auto& c : o.calibration.empty() ? std::vector<std::string>{o.check.inputs_path} : o.calibration) {
    if (c.empty()) continue;
    std::error_code ec;
    if (fs::is_directory(c, ec)) {
      for (const auto& e : fs::directory_iterator(c, ec))
        if (e.path().extension() == ".npz") files.push_back(e.path().string());
    } else if (fs::path(c).extension() == ".npz") {
      files.push_back(c);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    return InvalidArgument("fix: an int8 copy is re-quantized from calibration samples: give --calibration "
                           "FILE.npz|DIR or --inputs FILE.npz");
  return files;
}

}  // namespace

namespace {

struct DerivedSpace {
  std::string kind;  // "int8" or "float16"
  GraphView graph;   // the float model's
  std::set<std::string> eligible;
};

// The float model's nodes the derived copy still holds under their names
// (what nodes_to_exclude / node_block_list can name).
Result<DerivedSpace> Space(const FixOptions& o, const CheckReport& base) {
  DerivedSpace s;
  const std::string quant = base.quant ? base.quant->kind : "";
  s.kind = quant == "qdq" ? "int8" : quant == "float16" ? "float16" : "";
  if (s.kind.empty()) return s;
  PARITY_ASSIGN_OR_RETURN(Model float_model, Model::Load(o.check.reference.path));
  PARITY_ASSIGN_OR_RETURN(s.graph, BuildGraphView(float_model, {.infer_shapes = false}));
  PARITY_ASSIGN_OR_RETURN(Model derived, Model::Load(o.check.model_path));
  PARITY_ASSIGN_OR_RETURN(GraphView dg, BuildGraphView(derived, {.infer_shapes = false}));
  for (const auto& n : s.graph.nodes)
    if (!n.name.empty() && dg.FindNode(n.name) && n.op_type != "Identity" && n.op_type != "Constant")
      s.eligible.insert(n.name);
  return s;
}

std::string JsonList(const std::vector<std::string>& names) { return ToJsonText(nlohmann::json(names)); }

}  // namespace

Result<std::optional<Found>> FixDerived(const FixOptions& o, const CheckReport& base, FixResult& result) {
  PARITY_ASSIGN_OR_RETURN(DerivedSpace space, Space(o, base));
  if (space.kind.empty()) {
    result.kind = "derived";
    result.note = "the derived model is neither an int8 QDQ nor a float16 copy of its reference: parity does not "
                  "know how it was made";
    return std::optional<Found>();
  }
  result.kind = space.kind;
  std::vector<std::string> calibration;
  if (space.kind == "int8") {
    PARITY_ASSIGN_OR_RETURN(calibration, Calibration(o));
  }
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("fix"));
  int made = 0;
  auto request = [&](const std::vector<std::string>& exclude, const fs::path& out) {
    return nlohmann::json{{"kind", space.kind}, {"float_model", o.check.reference.path.string()},
                          {"derived_model", o.check.model_path}, {"out", out.string()},
                          {"exclude", exclude}, {"calibration", calibration}};
  };
  std::map<std::string, fs::path> made_for;
  const Probe probe = [&](const std::vector<std::string>& change, std::string* note) -> Result<bool> {
    const fs::path out = scratch / fmt::format("candidate_{}.onnx", made);
    const fs::path req = scratch / fmt::format("request_{}.json", made++);
    PARITY_ASSIGN_OR_RETURN(nlohmann::json answer, RunDriver(o, req, request(change, out)));
    if (!answer.value("ok", false)) {
      *note = answer.value("error", std::string("the driver failed"));
      return false;
    }
    if (answer.contains("settings")) result.settings = ToJsonText(answer["settings"]);
    CheckOptions p = ProbeOptions(o.check);
    p.model_path = out.string();
    PARITY_ASSIGN_OR_RETURN(CheckReport r, RunCheck(p));
    made_for[JsonList(change)] = out;
    return Passed(r);
  };
  result.seeds = Seeds(base, space.eligible);
  const std::vector<std::string> all(space.eligible.begin(), space.eligible.end());
  PARITY_ASSIGN_OR_RETURN(result.search,
                          SearchSmallestChange({.seeds = result.seeds, .grow = GraphGrow(space.graph, space.eligible),
                                                .all = all, .budget = o.budget_runs, .on_probe = o.on_probe},
                                               probe));
  if (!result.search.found) {
    if (!result.search.probes.empty() && !result.search.probes.front().note.empty())
      result.note = "the converter refused: " + result.search.probes.front().note;
    return std::optional<Found>();
  }
  result.change = *result.search.found;
  const auto candidate = made_for.find(JsonList(result.change));
  if (candidate == made_for.end()) return InternalError("fix: the passing candidate was not kept");
  const fs::path fixed = FreshPath(o.out_dir, "fixed_" + space.kind, ".onnx");
  std::error_code ec;
  fs::copy_file(candidate->second, fixed, fs::copy_options::none, ec);
  if (ec) return RuntimeError(fmt::format("fix: cannot write {}: {}", fixed.string(), ec.message()));
  const fs::path req = FreshPath(o.out_dir, "fix_request", ".json");
  PARITY_RETURN_IF_ERROR(
      WriteJsonFile(req, request(result.change, FreshPath(o.out_dir, "remade_" + space.kind, ".onnx"))));
  result.written = fixed.string();
  result.remake = fmt::format("{} -m parity._fix_driver {}", ShellWord(o.python), ShellWord(req.string()));
  result.command = "parity check " + ShellWord(fixed.string());
  for (const auto& a : o.check_args) result.command += " " + ShellWord(a);
  Found found{.verified = o.check, .fixed_path = fixed.string()};
  found.verified.model_path = fixed.string();
  return std::optional<Found>(std::move(found));
}

}  // namespace parity::fix_internal
