// _kiln.Pinned: holds a buffer export of a bytes-like object for as long as
// it lives, and re-exports those bytes read-only.
//
// NumPy (1.24) keeps a reference to the object behind a memoryview but not
// its buffer export, so an array made directly from a bytearray would dangle
// after the bytearray is resized. Arrays made from a Pinned keep the Pinned
// alive, and with it the export: resizing raises BufferError instead.
#include <cstdint>
#include <span>

#include "bindings.h"
#include "buffer_view.h"

namespace kiln::python {
namespace {

class Pinned {
 public:
  explicit Pinned(const py::object& source) : source_(source), view_(source) {}

  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return view_.bytes(); }

 private:
  py::object source_;  // a reference, besides the export
  BufferView view_;
};

}  // namespace

void BindPinned(py::module_& m) {
  BindByteExporter<Pinned, const py::object&>(m, "Pinned", "source");
}

}  // namespace kiln::python
