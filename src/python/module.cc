// parity._core: the C++ comparison engine bound for Python with nanobind.
//
// compare_sets() reads NumPy arrays in place: each C-contiguous array on the
// CPU becomes a Tensor that borrows its buffer (Tensor::Borrow), so a 256 MB
// array is not copied. The GIL is released while the kernel runs; the arrays
// stay alive because the caller's dicts hold them for the whole call.
// Results come back as the JSON the command line writes (report/json/compare_json),
// so the numbers are the CLI's by construction. Errors raise ParityError
// (a ValueError) with the engine's one-line message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>

#include "compare/compare_sets.h"
#include "compare/tolerance.h"
#include "core/build_info.h"
#include "core/json_out.h"
#include "core/tensor.h"
#include "report/json/compare_json.h"

namespace nb = nanobind;

namespace parity::python {
namespace {

using Array = nb::ndarray<nb::c_contig, nb::device::cpu, nb::ro>;

// The Python exception every engine error becomes (created in the module init).
nb::object& ParityErrorType() {
  static nb::object type;
  return type;
}

[[noreturn]] void Raise(const Error& e) {
  PyErr_SetString(ParityErrorType().ptr(), e.message().c_str());
  throw nb::python_error();
}

Result<DType> DTypeOf(const Array& a, const std::string& name) {
  const nb::dlpack::dtype t = a.dtype();
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (t.lanes == 1) {
    switch (code) {
      case Code::Float:
        if (t.bits == 32) return DType::kFloat32;
        if (t.bits == 64) return DType::kFloat64;
        if (t.bits == 16) return DType::kFloat16;
        break;
      case Code::Bfloat:
        if (t.bits == 16) return DType::kBFloat16;
        break;
      case Code::Int:
        if (t.bits == 8) return DType::kInt8;
        if (t.bits == 16) return DType::kInt16;
        if (t.bits == 32) return DType::kInt32;
        if (t.bits == 64) return DType::kInt64;
        break;
      case Code::UInt:
        if (t.bits == 8) return DType::kUInt8;
        if (t.bits == 16) return DType::kUInt16;
        if (t.bits == 32) return DType::kUInt32;
        if (t.bits == 64) return DType::kUInt64;
        break;
      case Code::Bool:
        return DType::kBool;
      default:
        break;
    }
  }
  return Unsupported("tensor '" + name + "': unsupported array dtype (code " + std::to_string(t.code) + ", " +
                     std::to_string(t.bits) + " bits)");
}

// Borrows every array of `arrays` (no copy; see the file comment).
TensorSet BorrowAll(const std::map<std::string, Array>& arrays) {
  TensorSet set;
  for (const auto& [name, a] : arrays) {
    auto dtype = DTypeOf(a, name);
    if (!dtype) Raise(dtype.error());
    Shape shape(a.shape_ptr(), a.shape_ptr() + a.ndim());
    // No-op deleter: the caller's dict keeps the array alive for the call.
    std::shared_ptr<std::byte[]> bytes(static_cast<std::byte*>(const_cast<void*>(a.data())), [](std::byte*) {});
    if (auto s = set.Add(name, Tensor::Borrow(*dtype, std::move(shape), std::move(bytes))); !s) Raise(s.error());
  }
  return set;
}

// compare_sets(reference, test, policy_json, rename, noise, allow_extra,
// threads) -> JSON text of parity.compare/1's comparison part.
std::string CompareSetsJson(const std::map<std::string, Array>& reference, const std::map<std::string, Array>& test,
                            const std::string& policy_json, const std::map<std::string, std::string>& rename,
                            const std::map<std::string, Array>& noise, bool allow_extra, int threads,
                            const std::vector<std::string>& order) {
  nlohmann::json pj = nlohmann::json::parse(policy_json, nullptr, /*allow_exceptions=*/false);
  if (pj.is_discarded()) Raise(Error(ErrorCode::kInvalidArgument, "tolerance: not valid JSON"));
  auto policy = TolerancePolicyFromJson(pj);
  if (!policy) Raise(policy.error());  // the CLI prefixes the policy file's name
  TensorSet ref_unordered = BorrowAll(reference);
  // A Python dict has an order; std::map does not: put the reference back in
  // the caller's order so the report lists tensors as given.
  TensorSet ref;
  for (const auto& name : order)
    if (const Tensor* t = ref_unordered.Find(name)) (void)ref.Add(name, *t);
  TensorSet tst = BorrowAll(test);
  TensorSet noise_set = BorrowAll(noise);
  CompareOptions options;
  options.policy = *policy;
  options.rename = rename;
  options.allow_extra_in_test = allow_extra;
  options.threads = threads;
  if (!noise.empty()) options.noise_reference = &noise_set;
  Result<SetComparison> result;
  {
    nb::gil_scoped_release release;
    result = CompareSets(ref, tst, options);
  }
  if (!result) Raise(result.error());
  nlohmann::json j = SetComparisonToJson(*result);
  j["policy"] = TolerancePolicyToJson(options.policy);
  return ToJsonText(j);
}

}  // namespace
}  // namespace parity::python

NB_MODULE(_core, m) {
  m.doc() = "parity's C++ comparison engine (nanobind); use the functions in `parity`.";
  m.attr("__version__") = PARITY_VERSION;
  parity::python::ParityErrorType() =
      nb::borrow(PyErr_NewExceptionWithDoc("parity.ParityError",
                                           "A bad input or option: the engine's one-line message (exit code 2 in the CLI).",
                                           PyExc_ValueError, nullptr));
  m.attr("ParityError") = parity::python::ParityErrorType();
  m.def("compare_sets", &parity::python::CompareSetsJson, nb::arg("reference"), nb::arg("test"),
        nb::arg("policy_json"), nb::arg("rename"), nb::arg("noise"), nb::arg("allow_extra"), nb::arg("threads"),
        nb::arg("order"),
        "Compares two dicts of C-contiguous arrays in place (no copy) and returns the parity.compare/1 JSON "
        "text of the comparison.");
}
