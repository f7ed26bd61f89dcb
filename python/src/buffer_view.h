// A held buffer export (PEP 3118) of a bytes-like object, as contiguous bytes.
//
// While it lives the exporter cannot be resized (a bytearray raises
// BufferError), so the span stays valid with the GIL released.
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
  // A read-only exporter cannot change while we read it with the GIL
  // released; a writable one could, from another Python thread.
  [[nodiscard]] bool readonly() const { return view_.readonly != 0; }

 private:
  Py_buffer view_{};
};

}  // namespace kiln::python

#endif  // KILN_PYTHON_BUFFER_VIEW_H_
