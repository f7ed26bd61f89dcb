// The _kiln extension module: the C++ parser and writer for the kiln package.
// The public API is the Python package (python/kiln); this module is private.
#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "bindings.h"
#include "kiln/status.h"

namespace kiln::python {
namespace {

py::str Utf8Lossy(std::string_view s) {
  PyObject* o =
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

// kiln._errors.class_for, imported once, when the module is (the package
// imports kiln._errors before it imports _kiln). Kept for the life of the
// process: never released, so no reference is dropped after the interpreter
// is gone.
py::handle& ClassFor() {
  static py::handle class_for;
  return class_for;
}

}  // namespace

void ImportErrorClasses() {
  ClassFor() = py::object(py::module_::import("kiln._errors").attr("class_for")).release();
}

void RaiseKilnError(const Error& e) {
  const std::string_view cls_name = ErrorClassName(e.error_class);
  py::object cls = ClassFor()(py::str(std::string(cls_name)));
  py::object tensor = e.tensor ? py::object(py::int_(*e.tensor)) : py::object(py::none());
  py::object exc =
      cls(Utf8Lossy(e.ToString()), py::str(std::string(cls_name)),
          py::str(std::string(RuleName(e.rule))), py::int_(e.offset), tensor, Utf8Lossy(e.message));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

ParseOptions MakeOptions(std::optional<std::uint64_t> max_tensors,
                         std::optional<std::uint64_t> max_block_bytes,
                         std::optional<std::uint64_t> max_name_bytes, bool prefix) {
  ParseOptions options;
  options.mode = prefix ? Mode::kPrefix : Mode::kWhole;
  if (max_tensors) options.limits.max_tensors = *max_tensors;
  if (max_block_bytes) options.limits.max_block_bytes = *max_block_bytes;
  if (max_name_bytes) options.limits.max_name_bytes = *max_name_bytes;
  return options;
}

}  // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ core (private: use the kiln package)";
  kiln::python::ImportErrorClasses();
  // The format's constants the package needs (kiln/directory.h).
  m.attr("FLAG_NAMES") = kiln::kFlagNames;
  m.attr("MAX_RANK") = kiln::kMaxRank;
  m.attr("QUANT_PER_AXIS") = static_cast<int>(kiln::QuantScheme::kPerAxis);
  m.attr("QUANT_GROUPED") = static_cast<int>(kiln::QuantScheme::kGrouped);
  kiln::python::BindMapping(m);
  kiln::python::BindPinned(m);
  kiln::python::BindParse(m);
  kiln::python::BindWrite(m);
  kiln::python::BindStream(m);
  kiln::python::BindRanges(m);
  kiln::python::BindEscape(m);
}
