// _kiln.StreamValidator: kiln::StreamValidator (kiln/stream.h) for Python
// upload handlers.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/stream.h"

namespace kiln::python {
namespace {

// One validator, safe to share between threads: calls are serialised by a
// mutex taken after the GIL is released (so a waiting thread never holds the
// GIL). feed() returns True when the block is complete, False when more bytes
// are needed, and raises the KilnError subclass at the first rejection.
class PyStreamValidator {
 public:
  explicit PyStreamValidator(const ParseOptions& options)
      : validator_(StreamOptions{options.mode, options.limits}) {}

  bool Feed(const py::object& chunk) {
    const BufferView view(chunk);
    StreamStatus status{};
    {
      // Hold the GIL unless the chunk cannot change (bytes, a Mapping): no
      // Python thread may change it while it is read (F4).
      const base::BusGuardScope guard;  // a mapped chunk truncated meanwhile
      std::optional<py::gil_scoped_release> unlocked;
      if (ParsesWithoutGil(chunk)) unlocked.emplace();
      const std::lock_guard<std::mutex> lock(mu_);
      status = validator_.Feed(view.bytes());
    }
    RaiseIfMappingCut(chunk);
    return Check(status);
  }

  bool Finish() {
    StreamStatus status{};
    {
      const py::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> lock(mu_);
      status = validator_.Finish();
    }
    return Check(status);
  }

  std::uint64_t Consumed() {
    const std::lock_guard<std::mutex> lock(mu_);
    return validator_.consumed();
  }

  std::size_t Used() {
    const std::lock_guard<std::mutex> lock(mu_);
    return validator_.used();
  }

 private:
  bool Check(StreamStatus status) {
    if (status == StreamStatus::kRejected) {
      Error e;
      {
        const std::lock_guard<std::mutex> lock(mu_);
        e = validator_.error();
      }
      RaiseKilnError(e);
    }
    return status == StreamStatus::kComplete;
  }

  std::mutex mu_;
  StreamValidator validator_;
};

}  // namespace

void BindStream(py::module_& m) {
  py::class_<PyStreamValidator>(m, "StreamValidator")
      .def(py::init([](std::optional<std::uint64_t> max_tensors,
                       std::optional<std::uint64_t> max_block_bytes,
                       std::optional<std::uint64_t> max_name_bytes, bool prefix) {
             return new PyStreamValidator(
                 MakeOptions(max_tensors, max_block_bytes, max_name_bytes, prefix));
           }),
           py::arg("max_tensors"), py::arg("max_block_bytes"), py::arg("max_name_bytes"),
           py::arg("prefix"))
      .def("feed", &PyStreamValidator::Feed, py::arg("chunk"))
      .def("finish", &PyStreamValidator::Finish)
      .def_property_readonly("consumed", &PyStreamValidator::Consumed)
      .def_property_readonly("used", &PyStreamValidator::Used);
}

}  // namespace kiln::python
