// _kiln.write: the canonical block of a list of tensors, through
// kiln::BlockWriter, as bytes or into a file. The package has already turned
// each array into C-contiguous little-endian bytes and checked its dtype.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/dtype.h"
#include "kiln/writer.h"

namespace kiln::python {
namespace {

// Each entry: (name as UTF-8 bytes, empty for unnamed; Kiln dtype name;
// shape; bytes-like payload). The views keep every payload exported (and so
// unresizable) until the block is written.
struct Prepared {
  BlockWriter writer;
  std::vector<std::unique_ptr<BufferView>> views;
};

Prepared Prepare(const py::list& entries) {
  Prepared p;
  std::size_t i = 0;
  for (const py::handle entry : entries) {
    const auto t = entry.cast<py::tuple>();
    TensorRequest r;
    // Exactly bytes (the package encodes every name): anything else would
    // reach pybind11's caster, whose failure is a bare RuntimeError.
    const py::object name = t[0];
    if (!PyBytes_CheckExact(name.ptr())) {
      throw py::type_error("tensor " + std::to_string(i) + ": the name must be bytes, not " +
                           std::string(Py_TYPE(name.ptr())->tp_name));
    }
    r.name.assign(PyBytes_AS_STRING(name.ptr()),
                  static_cast<std::size_t>(PyBytes_GET_SIZE(name.ptr())));
    ++i;
    const std::string dtype = t[1].cast<std::string>();
    const DtypeInfo* info = FindDtypeByName(dtype);
    if (info == nullptr) throw py::value_error("unknown Kiln dtype " + dtype);
    r.dtype = info->dtype;
    r.shape = t[2].cast<std::vector<std::uint64_t>>();
    p.views.push_back(std::make_unique<BufferView>(t[3]));
    const Result<std::uint32_t> added = p.writer.Add(r, Payload::Bytes(p.views.back()->bytes()));
    if (!added.ok()) RaiseKilnError(added.error());
  }
  return p;
}

// OSError for a file that could not be written (the errno, the message,
// the file name).
[[noreturn]] void RaiseWriteFailure(const WriteError& io, const std::string& path) {
  PyObject* name =
      PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
  if (name == nullptr) throw py::error_already_set();
  PyErr_SetObject(PyExc_OSError, py::make_tuple(io.error_number, io.ToString(),
                                                py::reinterpret_steal<py::object>(name))
                                     .ptr());
  throw py::error_already_set();
}

py::object Write(const py::list& entries, const std::optional<std::string>& path) {
  const Prepared p = Prepare(entries);
  // The block is sealed once (every rule checked); only I/O can fail after.
  const Result<BlockPlan> sealed = p.writer.Plan();
  if (!sealed.ok()) RaiseKilnError(sealed.error());
  const BlockPlan& plan = sealed.value();
  if (path) {
    std::optional<Result<std::uint64_t, WriteError>> written;
    {
      py::gil_scoped_release unlocked;
      written.emplace(plan.WriteToFile(*path));
    }
    if (!written->ok()) RaiseWriteFailure(written->error(), *path);
    return py::int_(written->value());
  }
  const std::uint64_t length = plan.block_length();
  if (length > static_cast<std::uint64_t>(PY_SSIZE_T_MAX)) {
    throw py::value_error("block of " + std::to_string(length) + " bytes is too large");
  }
  const auto n = static_cast<Py_ssize_t>(length);
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, n);
  if (raw == nullptr) throw py::error_already_set();
  auto out = py::reinterpret_steal<py::bytes>(raw);
  char* dst = PyBytes_AS_STRING(raw);
  std::uint64_t pos = 0;
  std::optional<Result<std::uint64_t, WriteError>> written;
  {
    py::gil_scoped_release unlocked;
    written.emplace(plan.WriteTo([&](std::span<const std::uint8_t> b) {
      if (b.size() > length - pos) return false;  // never past the end
      if (!b.empty()) std::memcpy(dst + pos, b.data(), b.size());
      pos += b.size();
      return true;
    }));
  }
  if (!written->ok()) throw std::runtime_error("kiln: " + written->error().ToString());
  if (pos != length) throw std::runtime_error("kiln: the writer wrote a short block");
  return out;
}

}  // namespace

void BindWrite(py::module_& m) {
  m.def("write", &Write, py::arg("entries"), py::arg("path") = py::none(),
        "Writes the canonical block: bytes, or into the file at path (returns its length).");
}

}  // namespace kiln::python
