// _kiln.parse: validates a buffer and returns its tensor table as plain
// TensorRecords; the package builds TensorInfo objects and NumPy views.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/directory.h"
#include "kiln/dtype.h"

namespace kiln::python {
namespace {

py::object OptionalText(std::string_view s) {
  if (s.empty()) return py::none();
  // Names and layouts passed N3 / O-rules: well-formed UTF-8.
  return py::str(s.data(), s.size());
}

py::object OptionalIndex(std::optional<std::uint32_t> i) {
  return i ? py::object(py::int_(*i)) : py::object(py::none());
}

// One tensor of a parsed block, as _kiln.parse returns it (_kiln.TensorRecord;
// the package turns it into a TensorInfo).
struct TensorRecord {
  std::uint32_t index = 0;
  py::object name;    // str, or None in an unnamed block
  std::string dtype;  // the Kiln dtype name
  py::tuple shape;
  std::uint64_t offset = 0;  // from the start of the payload region
  std::uint64_t length = 0;
  std::uint64_t start = 0;  // where the payload begins in the parsed buffer
  py::object layout;        // str, or None
  std::uint32_t block_size = 0;
  int scheme = 0;   // QuantScheme: 0 none, QUANT_PER_AXIS, QUANT_GROUPED
  py::object axis;  // int, or None when not quantised
  std::uint32_t group_size = 0;
  py::object scale_index;  // int, or None
  py::object outer_index;  // int, or None
};

TensorRecord Record(const Tensor& t, std::uint64_t start) {
  TensorRecord r;
  py::tuple shape(t.rank);
  for (std::size_t d = 0; d < t.rank; ++d) shape[d] = py::int_(t.shape[d]);
  const bool quantised = t.quant.scheme != QuantScheme::kNone;
  r.index = t.index;
  r.name = OptionalText(t.name);
  r.dtype = std::string(GetDtypeInfo(t.dtype).name);
  r.shape = shape;
  r.offset = t.byte_offset;
  r.length = t.byte_length;
  r.start = start;
  r.layout = OptionalText(t.layout);
  r.block_size = t.block_size;
  r.scheme = static_cast<int>(t.quant.scheme);
  r.axis = quantised ? py::object(py::int_(t.quant.axis)) : py::object(py::none());
  r.group_size = t.quant.group_size;
  r.scale_index = OptionalIndex(t.quant.scale_index);
  r.outer_index = OptionalIndex(t.quant.outer_index);
  return r;
}

// A tensor with its texts copied out of the buffer (ParseBuffer).
struct Snapshot {
  Tensor tensor;
  std::string name;
  std::string layout;
  std::uint64_t start = 0;  // where the payload begins in the parsed buffer
};

py::tuple ParseBuffer(const py::object& source, std::optional<std::uint64_t> max_tensors,
                      std::optional<std::uint64_t> max_block_bytes,
                      std::optional<std::uint64_t> max_name_bytes, bool prefix) {
  const BufferView view(source);
  const ParseOptions options = MakeOptions(max_tensors, max_block_bytes, max_name_bytes, prefix);
  const std::span<const std::uint8_t> bytes = view.bytes();
  std::optional<Result<Directory>> parsed;
  {
    // A mapped file truncated meanwhile: zeros, and OSError below, not SIGBUS.
    const base::BusGuardScope guard;
    if (ParsesWithoutGil(source)) {
      py::gil_scoped_release unlocked;
      parsed.emplace(Parse(bytes, options));
    } else {
      // Any other buffer, read-only views included, keeps the GIL: no Python
      // thread may change the bytes while they are checked (F4).
      parsed.emplace(Parse(bytes, options));
    }
  }
  RaiseIfMappingCut(source);  // no verdict on the zeros of a truncated file
  if (!parsed->ok()) RaiseKilnError(parsed->error());
  const Directory& dir = parsed->value();
  // Directory::tensor decodes its descriptor from the buffer when asked.
  // Every Python object made below may run the garbage collector, hence
  // Python code, hence another thread that changes a mutable buffer (F4): so
  // every tensor, its texts included, is copied out first, before the first
  // Python object, while nothing else can run. The copies are bounded by the
  // descriptors present (T1 held).
  std::vector<Snapshot> snapshots;
  snapshots.reserve(dir.tensor_count());
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    const Tensor t = dir.tensor(i);
    snapshots.push_back({t, std::string(t.name), std::string(t.layout),
                         static_cast<std::uint64_t>(t.payload.data() - bytes.data())});
  }
  py::dict header = HeaderDict(dir.header());
  py::list tensors;
  for (Snapshot& s : snapshots) {
    s.tensor.name = s.name;  // views into the copies
    s.tensor.layout = s.layout;
    tensors.append(RecordObject(s.tensor, s.start));
  }
  return py::make_tuple(header, tensors);
}

}  // namespace

py::object RecordObject(const Tensor& t, std::uint64_t start) { return py::cast(Record(t, start)); }

py::dict HeaderDict(const HeaderInfo& h) {
  py::dict header;
  header["flags"] = h.flags;
  header["tensor_count"] = h.tensor_count;
  header["name_bytes"] = h.name_bytes;
  header["payload_bytes"] = h.payload_bytes;
  header["directory_bytes"] = h.directory_bytes;
  header["payload_base"] = h.payload_base;
  header["block_length"] = h.block_length;
  return header;
}

void BindParse(py::module_& m) {
  py::class_<TensorRecord>(m, "TensorRecord")
      .def_readonly("index", &TensorRecord::index)
      .def_readonly("name", &TensorRecord::name)
      .def_readonly("dtype", &TensorRecord::dtype)
      .def_readonly("shape", &TensorRecord::shape)
      .def_readonly("offset", &TensorRecord::offset)
      .def_readonly("length", &TensorRecord::length)
      .def_readonly("start", &TensorRecord::start)
      .def_readonly("layout", &TensorRecord::layout)
      .def_readonly("block_size", &TensorRecord::block_size)
      .def_readonly("scheme", &TensorRecord::scheme)
      .def_readonly("axis", &TensorRecord::axis)
      .def_readonly("group_size", &TensorRecord::group_size)
      .def_readonly("scale_index", &TensorRecord::scale_index)
      .def_readonly("outer_index", &TensorRecord::outer_index);
  m.def("parse", &ParseBuffer, py::arg("source"), py::arg("max_tensors"),
        py::arg("max_block_bytes"), py::arg("max_name_bytes"), py::arg("prefix"),
        "Validates a bytes-like block; returns (header, [TensorRecord]) or raises KilnError.");
}

}  // namespace kiln::python
