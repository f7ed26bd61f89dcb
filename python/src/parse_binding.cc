// _kiln.parse: validates a buffer and returns its tensor table as plain
// Python values; the package builds TensorInfo objects and NumPy views.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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

// (index, name, dtype, shape, offset, length, start, layout, block_size,
//  scheme, axis, group_size, scale_index, outer_index); start is where the
// payload begins in the parsed buffer.
py::tuple TensorTuple(const Tensor& t, const std::uint8_t* base) {
  py::tuple shape(t.rank);
  for (std::size_t d = 0; d < t.rank; ++d) shape[d] = py::int_(t.shape[d]);
  const auto start = static_cast<std::uint64_t>(t.payload.data() - base);
  const bool quantised = t.quant.scheme != QuantScheme::kNone;
  return py::make_tuple(
      t.index, OptionalText(t.name), std::string(GetDtypeInfo(t.dtype).name), shape, t.byte_offset,
      t.byte_length, start, OptionalText(t.layout), t.block_size, static_cast<int>(t.quant.scheme),
      quantised ? py::object(py::int_(t.quant.axis)) : py::object(py::none()), t.quant.group_size,
      OptionalIndex(t.quant.scale_index), OptionalIndex(t.quant.outer_index));
}

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
  const HeaderInfo& h = dir.header();
  py::list tensors;
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    tensors.append(TensorTuple(dir.tensor(i), bytes.data()));
  }
  py::dict header;
  header["flags"] = h.flags;
  header["tensor_count"] = h.tensor_count;
  header["name_bytes"] = h.name_bytes;
  header["payload_bytes"] = h.payload_bytes;
  header["directory_bytes"] = h.directory_bytes;
  header["payload_base"] = h.payload_base;
  header["block_length"] = h.block_length;
  return py::make_tuple(header, tensors);
}

}  // namespace

void BindParse(py::module_& m) {
  m.def("parse", &ParseBuffer, py::arg("source"), py::arg("max_tensors"),
        py::arg("max_block_bytes"), py::arg("max_name_bytes"), py::arg("prefix"),
        "Validates a bytes-like block; returns (header, tensor tuples) or raises KilnError.");
}

}  // namespace kiln::python
