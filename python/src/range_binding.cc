// _kiln.RangeValidator: kiln::RangeValidator (kiln/random_access.h) for the
// package's file-object path (kiln/_ranges.py), which does the reading:
// next_range() -> (offset, length) or None; provide(bytes) hands the bytes
// over (copied with the GIL held, checked with it released); result()
// returns (header, [TensorRecord]) like _kiln.parse or raises the KilnError.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/random_access.h"

namespace kiln::python {
namespace {

// Made and driven by one call of kiln/_ranges.py, never shared between
// threads (provide() releases the GIL while it checks).
class PyRangeValidator {
 public:
  PyRangeValidator(std::uint64_t size, const RangeOptions& options) : v_(size, options) {}

  py::object NextRange() const {
    const std::optional<ByteRange> want = v_.NextRange();
    if (!want) return py::none();
    return py::make_tuple(want->offset, want->length);
  }

  void Provide(const py::object& chunk) {
    const BufferView view(chunk);
    const std::optional<ByteRange> want = v_.NextRange();
    if (!want) throw py::value_error("no range is wanted");
    if (view.bytes().size() != want->length) {
      v_.Provide(view.bytes());  // kReadFailed, with the message
      RaiseReadFailed();
    }
    // Copied with the GIL held: no Python thread changes a bytearray meanwhile.
    const std::span<std::uint8_t> to = v_.Buffer();
    std::copy(view.bytes().begin(), view.bytes().end(), to.begin());
    const py::gil_scoped_release unlocked;
    v_.Filled();
  }

  void Failed(const std::string& message) { v_.ReaderFailed(message); }

  [[nodiscard]] std::uint64_t Reads() const { return v_.reads(); }
  [[nodiscard]] std::uint64_t BytesRead() const { return v_.bytes_read(); }

  py::tuple Result() const {
    switch (v_.status()) {
      case RangeStatus::kComplete:
        break;
      case RangeStatus::kRejected:
        RaiseKilnError(v_.error());
      case RangeStatus::kReadFailed:
        RaiseReadFailed();
      case RangeStatus::kNeedRange:
        throw py::value_error("the validator still wants a range");
    }
    const Directory& dir = v_.directory();
    py::list tensors;
    for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
      const Tensor t = dir.tensor(i);
      tensors.append(RecordObject(t, dir.header().payload_base + t.byte_offset));
    }
    return py::make_tuple(HeaderDict(dir.header()), tensors);
  }

 private:
  [[noreturn]] void RaiseReadFailed() const {
    PyErr_SetObject(PyExc_OSError, py::make_tuple(EIO, v_.read_error()).ptr());
    throw py::error_already_set();
  }

  RangeValidator v_;
};

}  // namespace

void BindRanges(py::module_& m) {
  m.attr("DEFAULT_MERGE_GAP") = kDefaultMergeGap;
  m.attr("DEFAULT_MAX_RANGE") = kDefaultMaxRange;
  py::class_<PyRangeValidator>(m, "RangeValidator")
      .def(py::init([](std::uint64_t size, std::optional<std::uint64_t> max_tensors,
                       std::optional<std::uint64_t> max_block_bytes,
                       std::optional<std::uint64_t> max_name_bytes, bool prefix,
                       std::uint64_t merge_gap, std::uint64_t max_range) {
             const ParseOptions p =
                 MakeOptions(max_tensors, max_block_bytes, max_name_bytes, prefix);
             RangeOptions o;
             o.mode = p.mode;
             o.limits = p.limits;
             o.merge_gap = merge_gap;
             o.max_range = max_range;
             return new PyRangeValidator(size, o);
           }),
           py::arg("size"), py::arg("max_tensors"), py::arg("max_block_bytes"),
           py::arg("max_name_bytes"), py::arg("prefix"), py::arg("merge_gap"), py::arg("max_range"))
      .def("next_range", &PyRangeValidator::NextRange)
      .def("provide", &PyRangeValidator::Provide, py::arg("chunk"))
      .def("failed", &PyRangeValidator::Failed, py::arg("message"))
      .def("result", &PyRangeValidator::Result)
      .def_property_readonly("reads", &PyRangeValidator::Reads)
      .def_property_readonly("bytes_read", &PyRangeValidator::BytesRead);
}

}  // namespace kiln::python
