#include "compare/compare_sets.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compare/judge.h"

namespace parity {
namespace {

std::string Describe(const Tensor& t) { return fmt::format("{} {}", DTypeName(t.dtype()), ShapeToString(t.shape())); }

// A set-valued group (set_valued.h) that failed element by element, judged
// row by row: passing, its outputs pass and their row-count findings stop
// being fatal; failing, each says how the set match failed.
void JudgeAsSet(const SetValuedGroup& g, const TensorSet& reference, const TensorSet& test, SetComparison& out) {
  std::vector<TensorComparison*> members;
  for (auto& c : out.tensors)
    if (std::find(g.outputs.begin(), g.outputs.end(), c.name) != g.outputs.end()) members.push_back(&c);
  if (members.size() != g.outputs.size() ||
      std::all_of(members.begin(), members.end(), [](const TensorComparison* c) { return c->status == Verdict::kPass; }))
    return;
  for (const auto* c : members)
    if (c->test_name != c->name) return;  // renamed outputs are not matched as sets
  std::vector<std::pair<std::string, Tolerance>> bands;
  for (const auto* c : members)
    if (c->tolerance.ref_rms > 0 || c->tolerance.tolerance.atol > 0) bands.emplace_back(c->name, c->tolerance.tolerance);
  auto m = MatchRows(g, reference, test, bands);
  if (!m) return;  // not row-shaped alike: the element-wise verdict stands
  const std::string line = fmt::format("set-valued ({}): {}", g.source, m->Describe());
  for (auto* c : members) {
    c->tolerance.rules_fired.push_back(line);
    if (m->passed) {
      c->status = Verdict::kPass;
      c->reason.clear();
    } else {
      c->status = Verdict::kFail;
      c->reason = (c->reason.empty() ? "" : c->reason + "; ") + line;
    }
  }
  if (m->passed)
    for (auto& f : out.findings)
      if (f.kind == StructuralFinding::Kind::kShapeMismatch &&
          std::find(g.outputs.begin(), g.outputs.end(), f.name) != g.outputs.end())
        f.fatal = false;
}

}  // namespace

std::string_view FindingKindName(StructuralFinding::Kind k) {
  switch (k) {
    case StructuralFinding::Kind::kMissingInTest: return "missing";
    case StructuralFinding::Kind::kExtraInTest: return "extra";
    case StructuralFinding::Kind::kShapeMismatch: return "shape";
    case StructuralFinding::Kind::kDTypeMismatch: return "dtype";
    case StructuralFinding::Kind::kUnknownMapName: return "map";
  }
  return "?";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kUnchecked: return "unchecked";
  }
  return "?";
}

std::string_view CheckVerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kUnchecked: return "SKIPPED";
  }
  return "?";
}

std::string_view OverallVerdictName(Verdict v) { return v == Verdict::kUnchecked ? "NOT JUDGED" : CheckVerdictName(v); }

bool SetComparison::passed() const {
  for (const StructuralFinding& f : findings) {
    if (f.fatal) return false;
  }
  for (const TensorComparison& t : tensors) {
    if (t.status != Verdict::kPass) return false;
  }
  return true;
}

Result<std::pair<std::string, std::string>> ParseRename(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size() || spec.find('=', eq + 1) != std::string_view::npos) {
    return InvalidArgument(fmt::format("--map '{}' is not REFERENCE_NAME=TEST_NAME", spec));
  }
  return std::make_pair(std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1)));
}

Result<SetComparison> CompareSets(const TensorSet& reference, const TensorSet& test, const CompareOptions& options) {
  SetComparison out;
  using Kind = StructuralFinding::Kind;
  for (const auto& [from, to] : options.rename) {
    if (!reference.Contains(from)) {
      out.findings.push_back({Kind::kUnknownMapName, from, "absent", fmt::format("--map {}={}", from, to), true});
    }
  }
  std::set<std::string> used;
  for (const NamedTensor& r : reference) {
    TensorComparison c;
    c.name = r.name;
    auto it = options.rename.find(r.name);
    c.test_name = it == options.rename.end() ? r.name : it->second;
    const Tensor* t = test.Find(c.test_name);
    if (t == nullptr) {
      out.findings.push_back({Kind::kMissingInTest, r.name, Describe(r.tensor), "absent", true});
      c.reason = fmt::format("'{}' is missing from the test set", c.test_name);
      out.tensors.push_back(std::move(c));
      continue;
    }
    used.insert(c.test_name);
    if (r.tensor.shape() != t->shape()) {
      out.findings.push_back({Kind::kShapeMismatch, r.name, Describe(r.tensor), Describe(*t), true});
      c.reason = fmt::format("shape differs: reference {} vs test {}", ShapeToString(r.tensor.shape()),
                             ShapeToString(t->shape()));
      out.tensors.push_back(std::move(c));
      continue;
    }
    if (r.tensor.dtype() != t->dtype()) {
      out.findings.push_back(
          {Kind::kDTypeMismatch, r.name, Describe(r.tensor), Describe(*t), !options.allow_dtype_change});
      if ((r.tensor.dtype() == DType::kString) != (t->dtype() == DType::kString)) {
        c.reason = fmt::format("dtype differs: reference {} vs test {}", DTypeName(r.tensor.dtype()),
                               DTypeName(t->dtype()));
        out.tensors.push_back(std::move(c));
        continue;
      }
    }
    std::optional<TensorMetrics> noise;
    const Tensor* noise_tensor = nullptr;
    if (options.noise_reference != nullptr) {
      if (const Tensor* n = options.noise_reference->Find(r.name);
          n != nullptr && n->shape() == r.tensor.shape() && n->dtype() != DType::kString) {
        auto nm = ComputeMetrics(r.tensor, *n, {.threads = options.threads});
        if (nm) noise = std::move(*nm), noise_tensor = n;
      }
    }
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(r.name, r.tensor, *t, options.policy,
                                                        {.noise = noise ? &*noise : nullptr,
                                                         .noise_tensor = noise_tensor,
                                                         .slice_bands = options.slice_bands,
                                                         .threads = options.threads,
                                                         .conditioning = options.conditioning != nullptr
                                                                             ? options.conditioning->Find(r.name)
                                                                             : nullptr}));
    TakeJudgment(c, std::move(j));
    out.tensors.push_back(std::move(c));
  }
  for (const NamedTensor& t : test) {
    if (used.contains(t.name)) continue;
    out.findings.push_back({Kind::kExtraInTest, t.name, "absent", Describe(t.tensor), !options.allow_extra_in_test});
  }
  for (const SetValuedGroup& g : options.set_groups) JudgeAsSet(g, reference, test, out);
  return out;
}

}  // namespace parity
