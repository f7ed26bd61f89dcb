// _kiln.Mapping: a file mapped read-only (MAP_PRIVATE) that exports a
// read-only buffer. Its header and directory are this process's own copy
// (kiln/base/private_prefix.h), so other processes writing the file cannot
// change them while they are parsed; payload bytes can still change. NumPy arrays made from it hold
// a reference to it, so the mapping lives until the last of them is gone; it is unmapped then.
//
// A file truncated by another process while it is mapped: the calls kiln
// itself runs on the mapping (mapping it, parse, StreamValidator.feed) run
// under base::BusGuardScope and raise OSError(EIO, "an input file was
// truncated ...") instead of dying of SIGBUS (RaiseIfMappingCut). The lost
// tail then reads as zeros for every view. A view read by NumPy outside those
// calls, past the file's new end, raises SIGBUS as for numpy.memmap: the
// process dies unless a handler is installed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "bindings.h"
#include "buffer_view.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/base/private_prefix.h"
#include "kiln/stable_prefix.h"

namespace kiln::python {
namespace {

class Mapping {
 public:
  // Opens and maps `path` (a file system path as bytes). Raises OSError.
  explicit Mapping(const py::bytes& path_bytes) {
    const std::string path = path_bytes;
    int err = 0;
    const char* what = nullptr;
    {
      py::gil_scoped_release unlocked;  // open() may block on a slow file system
      what = Open(path, err);
    }
    if (what != nullptr) {
      // OSError(errno, "cannot open", path): errno picks the subclass
      // (FileNotFoundError, PermissionError, ...).
      PyObject* name =
          PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
      if (name == nullptr) throw py::error_already_set();
      PyErr_SetObject(PyExc_OSError,
                      py::make_tuple(err, std::string(what) + " (" + std::strerror(err) + ")",
                                     py::reinterpret_steal<py::object>(name))
                          .ptr());
      throw py::error_already_set();
    }
  }
  ~Mapping() {
    base::UnguardMapping(guard_);
    if (data_ != nullptr) munmap(data_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // Whether the file was found truncated while kiln read the mapping.
  [[nodiscard]] bool cut() const { return base::MappingCut(guard_); }

  [[nodiscard]] std::span<const std::uint8_t> bytes() const {
    if (data_ == nullptr) return {};
    return {static_cast<const std::uint8_t*>(data_), size_};
  }

 private:
  // Returns nullptr on success, else what failed (errno in err).
  const char* Open(const std::string& path, int& err) {
    // O_NONBLOCK: a FIFO does not block the open; O_NOCTTY: a terminal does
    // not become ours. Both are refused below as not regular files.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      return "cannot open";
    }
    const char* what = Map(fd, err);
    if (data_ != nullptr) {
      fd_ = fd;  // kept: cut() asks the file's size (a cut inside the last page faults nowhere)
    } else {
      ::close(fd);
    }
    return what;
  }

  const char* Map(int fd, int& err) {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      err = errno;
      return "cannot stat";
    }
    if (!S_ISREG(st.st_mode)) {
      err = EINVAL;
      return "not a regular file";
    }
    if (st.st_size <= 0) return nullptr;
    if (static_cast<std::uint64_t>(st.st_size) > std::numeric_limits<std::size_t>::max() / 2) {
      err = EFBIG;
      return "too large to map";
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      err = errno;
      return "cannot map";
    }
    int e = 0;
    {
      const base::BusGuardScope guard;  // the file may already be shorter
      guard_ = base::GuardMapping(p, size, fd);
      e = base::PrivatizePrefix(p, size, &StablePrefixLength);
    }
    if (e == 0 && base::MappingCut(guard_)) e = EIO;
    if (e != 0) {
      base::UnguardMapping(guard_);
      guard_ = -1;
      munmap(p, size);
      err = e;
      return e == EIO ? base::kInputCutMessage : "cannot protect the mapping";
    }
    data_ = p;
    size_ = size;
    return nullptr;
  }

  int guard_ = -1;  // in base's table of guarded mappings
  int fd_ = -1;     // the mapped file, open while guarded
  void* data_ = nullptr;
  std::size_t size_ = 0;
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
