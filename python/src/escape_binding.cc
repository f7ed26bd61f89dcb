// _kiln.escape and _kiln.json_escape: kiln::base::Escape and JsonEscape, the
// one classification of untrusted text the command uses, for the package's
// own reports (kiln/scan.py prints file names and messages a file or a
// server supplied).
#include <string>

#include "bindings.h"
#include "kiln/base/escape.h"

namespace kiln::python {
namespace {

// The bytes of `text`: bytes as they are; a str as UTF-8 with its
// lone surrogates \udcNN turned back into the bytes they stand for
// (surrogateescape, as os.fsencode does), so a file name's bytes reach
// Escape unchanged. Any other lone surrogate is an error of the caller.
std::string TextBytes(const py::handle& text) {
  if (py::isinstance<py::str>(text)) {
    PyObject* b = PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogateescape");
    if (b == nullptr) throw py::error_already_set();
    return std::string(py::reinterpret_steal<py::bytes>(b));
  }
  if (py::isinstance<py::bytes>(text)) return std::string(py::reinterpret_borrow<py::bytes>(text));
  throw py::type_error("escape takes str or bytes");
}

py::str Ascii(const std::string& s) {
  // Escape's output is well-formed UTF-8 (every bad byte is written \xNN).
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

}  // namespace

void BindEscape(py::module_& m) {
  m.def(
      "escape", [](const py::handle& text) { return Ascii(base::Escape(TextBytes(text))); },
      py::arg("text"), "base::Escape: the text made safe and unambiguous on a terminal");
  m.def(
      "json_escape",
      [](const py::handle& text) {
        // JsonEscape writes a non-UTF-8 byte as \udcNN: ASCII text.
        return Ascii(base::JsonEscape(TextBytes(text)));
      },
      py::arg("text"), "base::JsonEscape: the inside of a JSON string literal");
}

}  // namespace kiln::python
