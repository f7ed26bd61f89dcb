// _kiln.Mapping: a file mapped read-only (MAP_PRIVATE) that exports a
// read-only buffer. Its header and directory are this process's own copy
// (kiln/base/private_prefix.h), so other processes writing the file cannot
// change them while they are parsed; payload bytes can still change. NumPy
// arrays made from it hold a reference to it, so the mapping lives until the
// last of them is gone; it is unmapped then. Opening and mapping are
// base::MappedInput's, as for the kiln command.
//
// A file truncated by another process while it is mapped: the calls kiln
// itself runs on the mapping (mapping it, parse, StreamValidator.feed) run
// under base::BusGuardScope and raise OSError(EIO, "an input file was
// truncated ...") instead of dying of SIGBUS (RaiseIfMappingCut). The lost
// tail then reads as zeros for every view. A view read by NumPy outside those
// calls, past the file's new end, raises SIGBUS as for numpy.memmap: the
// process dies unless a handler is installed.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/base/mapped_input.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/stable_prefix.h"

namespace kiln::python {
namespace {

class Mapping {
 public:
  // Opens and maps `path` (a file system path as bytes) with
  // base::MappedInput. Raises OSError.
  explicit Mapping(const py::bytes& path_bytes) {
    const std::string path = path_bytes;
    {
      py::gil_scoped_release unlocked;  // open() may block on a slow file system
      input_.emplace(path, &StablePrefixLength);
    }
    if (input_->ok()) return;
    // OSError(errno, "cannot open (No such file or directory)", path): errno
    // picks the subclass (FileNotFoundError, PermissionError, ...).
    const int err = input_->error_number();
    PyObject* name =
        PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
    if (name == nullptr) throw py::error_already_set();
    PyErr_SetObject(
        PyExc_OSError,
        py::make_tuple(err, std::string(input_->what()) + " (" + std::strerror(err) + ")",
                       py::reinterpret_steal<py::object>(name))
            .ptr());
    throw py::error_already_set();
  }

  // Whether the file was found truncated while kiln read the mapping.
  [[nodiscard]] bool cut() const { return input_->cut(); }

  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return input_->bytes(); }

 private:
  std::optional<base::MappedInput> input_;
};

}  // namespace

namespace {
const Mapping* MappingOf(py::handle source) {
  PyObject* exporter = source.ptr();
  while (exporter != nullptr && PyMemoryView_Check(exporter)) {
    exporter = PyMemoryView_GET_BUFFER(exporter)->obj;
  }
  if (exporter == nullptr || !py::isinstance<Mapping>(py::handle(exporter))) return nullptr;
  return py::handle(exporter).cast<const Mapping*>();
}
}  // namespace

void RaiseIfMappingCut(py::handle source) {
  const Mapping* m = MappingOf(source);
  if (m == nullptr || !m->cut()) return;
  PyErr_SetObject(PyExc_OSError, py::make_tuple(EIO, base::kInputCutMessage).ptr());
  throw py::error_already_set();
}

bool ParsesWithoutGil(py::handle source) {
  PyObject* exporter = source.ptr();
  while (exporter != nullptr && PyMemoryView_Check(exporter)) {
    exporter = PyMemoryView_GET_BUFFER(exporter)->obj;
  }
  return exporter != nullptr &&
         (PyBytes_CheckExact(exporter) || py::isinstance<Mapping>(py::handle(exporter)));
}

void BindMapping(py::module_& m) {
  BindByteExporter<Mapping, const py::bytes&>(m, "Mapping", "path");
}

}  // namespace kiln::python
