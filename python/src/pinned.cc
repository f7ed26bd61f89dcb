// _kiln.Pinned: holds a buffer export of a bytes-like object for as long as
// it lives, and re-exports those bytes read-only.
//
// NumPy (1.24) keeps a reference to the object behind a memoryview but not
// its buffer export, so an array made directly from a bytearray would dangle
// after the bytearray is resized. Arrays made from a Pinned keep the Pinned
// alive, and with it the export: resizing raises BufferError instead.
#include <cstdint>
#include <memory>

#include "bindings.h"
#include "buffer_view.h"

namespace kiln::python {
namespace {

class Pinned {
 public:
  explicit Pinned(const py::object& source) : source_(source), view_(source) {}

  [[nodiscard]] py::buffer_info Buffer() const {
    static std::uint8_t empty = 0;
    const std::span<const std::uint8_t> b = view_.bytes();
    // NumPy does not write through a read-only export.
    void* p = b.empty() ? &empty : const_cast<std::uint8_t*>(b.data());
    return py::buffer_info(p, 1, py::format_descriptor<std::uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(b.size())}, {1}, /*readonly=*/true);
  }
  [[nodiscard]] std::size_t size() const { return view_.bytes().size(); }

 private:
  py::object source_;  // a reference, besides the export
  BufferView view_;
};

}  // namespace

void BindPinned(py::module_& m) {
  py::class_<Pinned>(m, "Pinned", py::buffer_protocol())
      .def(py::init<const py::object&>(), py::arg("source"))
      .def_buffer(&Pinned::Buffer)
      .def("__len__", &Pinned::size);
}

}  // namespace kiln::python
