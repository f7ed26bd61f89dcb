// The pieces of the _kiln extension module, each bound by its own file.
#ifndef KILN_PYTHON_BINDINGS_H_
#define KILN_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>

#include "kiln/directory.h"
#include "kiln/status.h"

namespace kiln::python {

namespace py = pybind11;

// Imports kiln._errors' class_for once, for RaiseKilnError (module.cc).
void ImportErrorClasses();
// Raises the kiln.KilnError subclass for the error's class (kiln._errors),
// carrying class, rule, offset, tensor and message; str() is e.ToString().
[[noreturn]] void RaiseKilnError(const Error& e);

// Parse options from the Python keywords (None: the format's own maximum).
// The Python layer has already checked that each is a non-negative int.
ParseOptions MakeOptions(std::optional<std::uint64_t> max_tensors,
                         std::optional<std::uint64_t> max_block_bytes,
                         std::optional<std::uint64_t> max_name_bytes, bool prefix);

// True when the bytes `source` exports cannot change while they are parsed
// with the GIL released: its exporter (through any memoryviews) is a `bytes`
// object or a _kiln.Mapping, whose header and directory are this process's own
// copy (kiln/base/private_prefix.h). A read-only view of anything else (a
// bytearray, a NumPy array, an mmap object) may still be written by another
// thread (finding F4): it is parsed with the GIL held. Other processes
// writing shared memory behind such a buffer are the caller's contract.
bool ParsesWithoutGil(py::handle source);  // mapping.cc
// Raises OSError(EIO) when `source` is (a view of) a _kiln.Mapping whose file
// was found truncated while kiln read it (mapping.cc).
void RaiseIfMappingCut(py::handle source);

// The _kiln.TensorRecord for tensor t, whose payload starts at byte `start`
// of the file or buffer, and the header as the dict _kiln.parse returns
// (parse_binding.cc).
py::object RecordObject(const Tensor& t, std::uint64_t start);
py::dict HeaderDict(const HeaderInfo& h);

void BindMapping(py::module_& m);  // mapping.cc: _kiln.Mapping
void BindPinned(py::module_& m);   // pinned.cc: _kiln.Pinned
void BindParse(py::module_& m);    // parse_binding.cc: _kiln.parse, _kiln.TensorRecord
void BindWrite(py::module_& m);    // write_binding.cc: _kiln.write
void BindStream(py::module_& m);   // stream_binding.cc: _kiln.StreamValidator
void BindRanges(py::module_& m);   // range_binding.cc: _kiln.RangeValidator
void BindEscape(py::module_& m);   // escape_binding.cc: _kiln.escape, _kiln.json_escape

}  // namespace kiln::python

#endif  // KILN_PYTHON_BINDINGS_H_
