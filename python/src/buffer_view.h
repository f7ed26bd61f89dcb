// A held buffer export (PEP 3118) of a bytes-like object, as contiguous bytes.
//
// While it lives the exporter cannot be resized (a bytearray raises
// BufferError), so the span stays valid with the GIL released. Its bytes may
// still change (a read-only view of a bytearray): see ParsesWithoutGil.
#ifndef KILN_PYTHON_BUFFER_VIEW_H_
#define KILN_PYTHON_BUFFER_VIEW_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::python {

class BufferView {
 public:
  // Requests a C-contiguous byte buffer; raises TypeError/BufferError when
  // the object does not offer one.
  explicit BufferView(pybind11::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
      throw pybind11::error_already_set();
    }
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  [[nodiscard]] std::span<const std::uint8_t> bytes() const {
    if (view_.len <= 0) return {};
    return {static_cast<const std::uint8_t*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// A read-only, 1-D export of bytes (a zero-length one for no bytes). NumPy
// arrays made from it cannot be written or made writable.
inline pybind11::buffer_info ReadOnlyBuffer(std::span<const std::uint8_t> b) {
  static std::uint8_t empty = 0;
  // const_cast only because buffer_info takes void*; the export is read-only.
  void* p = b.empty() ? &empty : const_cast<std::uint8_t*>(b.data());
  return pybind11::buffer_info(p, 1, pybind11::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<pybind11::ssize_t>(b.size())}, {1},
                               /*readonly=*/true);
}

// Binds T (constructed from one Arg, with bytes() giving its span) as a
// Python class exporting those bytes read-only.
template <typename T, typename Arg>
void BindByteExporter(pybind11::module_& m, const char* name, const char* arg) {
  pybind11::class_<T>(m, name, pybind11::buffer_protocol())
      .def(pybind11::init<Arg>(), pybind11::arg(arg))
      .def_buffer([](const T& t) { return ReadOnlyBuffer(t.bytes()); })
      .def("__len__", [](const T& t) { return t.bytes().size(); });
}

}  // namespace kiln::python

#endif  // KILN_PYTHON_BUFFER_VIEW_H_
