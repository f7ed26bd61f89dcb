// What every entry point of the C ABI does at the boundary (internal to
// capi/src): check struct_size, fill a kiln_error, turn a C++ exception into
// a status.
#ifndef KILN_CAPI_BOUNDARY_H_
#define KILN_CAPI_BOUNDARY_H_

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "kiln/kiln_c.h"
#include "message_cut.h"

namespace kiln::capi {

// Whether a caller's struct_size is one this library knows for T. Today
// that is sizeof(T) only: ABI 2 is the first with struct_size. A later minor
// version that appends fields to T will accept every size T had in an
// earlier release of ABI 2 as well, and read or write only the fields that
// fit in it (docs/c-api.md, "Compatibility").
template <typename T>
[[nodiscard]] bool KnownSize(std::uint32_t struct_size) {
  return struct_size == sizeof(T);
}

// A caller's kiln_error may be NULL (no error wanted) or of a known size.
// One of another size is left untouched: the function answers
// KILN_BAD_ARGUMENT without writing to it.
[[nodiscard]] inline bool ErrorUsable(const kiln_error* error) {
  return error == nullptr || KnownSize<kiln_error>(error->struct_size);
}

// Empty: class NONE, rule "", tensor KILN_NO_TENSOR, no message. Keeps
// struct_size.
inline void ClearError(kiln_error* error) {
  if (error == nullptr) return;
  error->error_class = KILN_CLASS_NONE;
  std::memset(error->rule, 0, sizeof error->rule);
  error->tensor = KILN_NO_TENSOR;
  error->offset = 0;
  error->message_truncated = 0;
  error->reserved = 0;
  error->message_length = 0;
  error->message[0] = '\0';
}

inline void SetMessage(kiln_error* error, std::string_view message) {
  bool truncated = false;
  error->message_length = CopyCut(message, error->message, sizeof error->message, &truncated);
  error->message_truncated = truncated ? 1U : 0U;
}

// An error that is not a verdict on the bytes: a caller mistake (class
// ARGUMENT), a failure of kiln itself (class INTERNAL) or no memory (class
// NONE); rule "".
inline void SetOther(kiln_error* error, int32_t error_class, std::string_view message) {
  if (error == nullptr) return;
  ClearError(error);
  error->error_class = error_class;
  SetMessage(error, message);
}

// A caller mistake; message names the argument.
inline kiln_status BadArgument(kiln_error* error, std::string_view message) {
  SetOther(error, KILN_CLASS_ARGUMENT, message);
  return KILN_BAD_ARGUMENT;
}

// Runs body() and turns an exception into a status (and an error, when the
// caller passed one).
template <typename Body>
kiln_status Guard(kiln_error* error, Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    SetOther(error, KILN_CLASS_NONE, "out of memory");
    return KILN_NO_MEMORY;
  } catch (const std::exception& e) {
    try {
      SetOther(error, KILN_CLASS_INTERNAL, e.what());
    } catch (...) {
      SetOther(error, KILN_CLASS_INTERNAL, "internal error");
    }
    return KILN_INTERNAL_ERROR;
  } catch (...) {
    SetOther(error, KILN_CLASS_INTERNAL, "internal error");
    return KILN_INTERNAL_ERROR;
  }
}

}  // namespace kiln::capi

#endif  // KILN_CAPI_BOUNDARY_H_
