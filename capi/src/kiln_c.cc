// The C ABI (kiln/kiln_c.h) over the C++ library: Parse, StreamValidator,
// RangeValidator, Directory. Every entry point checks its arguments (struct_size included),
// catches every exception (std::bad_alloc is KILN_NO_MEMORY, anything else
// KILN_INTERNAL_ERROR) and copies verdicts into the caller's structs;
// nothing C++ crosses the boundary (boundary.h).
#include "kiln/kiln_c.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "boundary.h"
#include "handles.h"
#include "kiln/base/escape.h"
#include "kiln/directory.h"
#include "kiln/dtype.h"
#include "kiln/random_access.h"
#include "kiln/status.h"
#include "kiln/stream.h"

namespace {

using kiln::capi::BadArgument;
using kiln::capi::ClearError;
using kiln::capi::ErrorUsable;
using kiln::capi::Guard;
using kiln::capi::KnownSize;
using kiln::capi::SetMessage;

int32_t ClassCode(kiln::ErrorClass c) {
  switch (c) {
    case kiln::ErrorClass::kFrame:
      return KILN_CLASS_FRAME;
    case kiln::ErrorClass::kType:
      return KILN_CLASS_TYPE;
    case kiln::ErrorClass::kLimit:
      return KILN_CLASS_LIMIT;
    case kiln::ErrorClass::kUtf8:
      return KILN_CLASS_UTF8;
  }
  return KILN_CLASS_NONE;
}

void SetVerdict(kiln_error* error, const kiln::Error& e) {
  if (error == nullptr) return;
  ClearError(error);
  error->error_class = ClassCode(e.error_class);
  const std::string_view rule = kiln::RuleName(e.rule);
  std::memcpy(error->rule, rule.data(), std::min(rule.size(), sizeof error->rule - 1));
  error->offset = e.offset;
  error->tensor = e.tensor.value_or(KILN_NO_TENSOR);
  SetMessage(error, e.message);
}

// Reads the caller's options (NULL: the defaults). False, with the argument
// error filled, when they are not well-formed.
bool ReadOptions(const kiln_options* options, kiln::Mode* mode, kiln::Limits* limits,
                 kiln_error* error) {
  *mode = kiln::Mode::kWhole;
  *limits = kiln::Limits{};
  if (options == nullptr) return true;
  if (!KnownSize<kiln_options>(options->struct_size)) {
    BadArgument(error,
                "options->struct_size is not sizeof(kiln_options): initialise options with "
                "kiln_options_init");
    return false;
  }
  if (options->mode != KILN_MODE_WHOLE && options->mode != KILN_MODE_PREFIX) {
    BadArgument(error, "options->mode is neither KILN_MODE_WHOLE nor KILN_MODE_PREFIX");
    return false;
  }
  *mode = options->mode == KILN_MODE_PREFIX ? kiln::Mode::kPrefix : kiln::Mode::kWhole;
  limits->max_tensors = options->max_tensors;
  limits->max_name_bytes = options->max_name_bytes;
  limits->max_block_bytes = options->max_block_bytes;
  return true;
}

// Writes every field but struct_size (the caller's, checked before).
void FillHeader(const kiln::HeaderInfo& h, kiln_header* out) {
  const std::uint32_t struct_size = out->struct_size;
  *out = kiln_header{};
  out->struct_size = struct_size;
  out->flags = h.flags;
  out->tensor_count = h.tensor_count;
  out->name_bytes = h.name_bytes;
  out->has_names = h.has_names() ? 1U : 0U;
  out->payload_bytes = h.payload_bytes;
  out->directory_bytes = h.directory_bytes;
  out->payload_base = h.payload_base;
  out->block_length = h.block_length;
}

const char* DtypeName(kiln::Dtype d) {
  switch (d) {
#define KILN_DTYPE(e, code, name, bits, scale) \
  case kiln::Dtype::e:                         \
    return name;
#include "kiln/dtypes.inc"
#undef KILN_DTYPE
  }
  return "";
}

kiln_status Validate(const uint8_t* data, size_t size, const kiln_options* options,
                     kiln_directory** out, kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (data == nullptr && size > 0) return BadArgument(error, "data is NULL and size is not 0");
  kiln::ParseOptions parse;
  if (!ReadOptions(options, &parse.mode, &parse.limits, error)) return KILN_BAD_ARGUMENT;
  const std::span<const std::uint8_t> bytes =
      size == 0 ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(data, size);
  const kiln::Result<kiln::Directory> r = kiln::Parse(bytes, parse);
  if (!r.ok()) {
    SetVerdict(error, r.error());
    return KILN_INVALID;
  }
  if (out != nullptr) *out = new kiln_directory{r.value()};
  ClearError(error);
  return KILN_OK;
}

kiln_status StatusOf(const kiln_stream& s) {
  switch (s.validator.status()) {
    case kiln::StreamStatus::kNeedMore:
      return KILN_NEED_MORE;
    case kiln::StreamStatus::kRejected:
      return KILN_INVALID;
    case kiln::StreamStatus::kComplete:
      return KILN_OK;
  }
  return KILN_INTERNAL_ERROR;
}

// Keeps the stream's directory in step with its status (whole mode: a byte
// after a complete block turns it into H8).
void SyncDirectory(kiln_stream* s) {
  if (s->validator.status() == kiln::StreamStatus::kComplete) {
    if (!s->directory) s->directory.emplace(kiln_directory{s->validator.directory()});
  } else {
    s->directory.reset();
  }
}

kiln_status StatusOf(const kiln_ranges& r) {
  switch (r.validator.status()) {
    case kiln::RangeStatus::kNeedRange:
      return KILN_NEED_MORE;
    case kiln::RangeStatus::kRejected:
      return KILN_INVALID;
    case kiln::RangeStatus::kComplete:
      return KILN_OK;
    case kiln::RangeStatus::kReadFailed:
      return KILN_READ_FAILED;
  }
  return KILN_INTERNAL_ERROR;
}

kiln_status SyncDirectory(kiln_ranges* r) {
  if (r->validator.status() == kiln::RangeStatus::kComplete && !r->directory) {
    r->directory.emplace(kiln_directory{r->validator.directory()});
  }
  return StatusOf(*r);
}

}  // namespace

extern "C" {

KILN_C_API const char* kiln_version(void) { return KILN_VERSION_STRING; }

KILN_C_API uint32_t kiln_version_number(void) { return KILN_VERSION_NUMBER; }

KILN_C_API uint32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }

KILN_C_API const char* kiln_error_class_name(int32_t error_class) {
  switch (error_class) {
    case KILN_CLASS_FRAME:
      return "FRAME";
    case KILN_CLASS_TYPE:
      return "TYPE";
    case KILN_CLASS_LIMIT:
      return "LIMIT";
    case KILN_CLASS_UTF8:
      return "UTF8";
    case KILN_CLASS_ARGUMENT:
      return "ARGUMENT";
    case KILN_CLASS_INTERNAL:
      return "INTERNAL";
    case KILN_CLASS_IO:
      return "IO";
    default:
      return "";
  }
}

KILN_C_API kiln_status kiln_rule_summary(const char* rule, size_t length, const char** summary) {
  if (summary == nullptr) return KILN_BAD_ARGUMENT;
  *summary = nullptr;
  if (rule == nullptr) return KILN_BAD_ARGUMENT;
  const std::string_view id(rule, length);
#define KILN_RULE(id_, cls, text) \
  if (id == #id_) {               \
    *summary = text;              \
    return KILN_OK;               \
  }
#include "kiln/rules.inc"
#undef KILN_RULE
  return KILN_BAD_ARGUMENT;
}

KILN_C_API kiln_status kiln_escape(const uint8_t* text, size_t length, char* out, size_t capacity,
                                   size_t* escaped_length) {
  if (escaped_length == nullptr) return KILN_BAD_ARGUMENT;
  *escaped_length = 0;
  if ((text == nullptr && length > 0) || (out == nullptr && capacity > 0)) {
    return KILN_BAD_ARGUMENT;
  }
  if (capacity > 0) out[0] = '\0';
  return Guard(nullptr, [&] {
    const std::string escaped = kiln::base::Escape(
        length == 0 ? std::string_view()
                    : std::string_view(reinterpret_cast<const char*>(text), length));
    *escaped_length = escaped.size();
    if (out == nullptr) return KILN_OK;  // a measurement
    if (escaped.size() >= capacity) return KILN_BUFFER_TOO_SMALL;
    std::memcpy(out, escaped.data(), escaped.size());
    out[escaped.size()] = '\0';
    return KILN_OK;
  });
}

KILN_C_API kiln_status kiln_options_init(kiln_options* options) {
  if (options == nullptr) return KILN_BAD_ARGUMENT;
  const kiln::Limits defaults;
  *options = kiln_options{};
  options->struct_size = sizeof(kiln_options);
  options->mode = KILN_MODE_WHOLE;
  options->max_tensors = defaults.max_tensors;
  options->max_name_bytes = defaults.max_name_bytes;
  options->max_block_bytes = defaults.max_block_bytes;
  return KILN_OK;
}

KILN_C_API kiln_status kiln_validate(const uint8_t* data, size_t size, const kiln_options* options,
                                     kiln_error* error) {
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  return Guard(error, [&] { return Validate(data, size, options, nullptr, error); });
}

KILN_C_API kiln_status kiln_parse(const uint8_t* data, size_t size, const kiln_options* options,
                                  kiln_directory** out, kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (out == nullptr) return BadArgument(error, "out is NULL");
  return Guard(error, [&] { return Validate(data, size, options, out, error); });
}

KILN_C_API void kiln_directory_free(kiln_directory* directory) { delete directory; }

KILN_C_API kiln_status kiln_directory_header(const kiln_directory* directory, kiln_header* out) {
  if (directory == nullptr || out == nullptr || !KnownSize<kiln_header>(out->struct_size)) {
    return KILN_BAD_ARGUMENT;
  }
  FillHeader(directory->directory.header(), out);
  return KILN_OK;
}

KILN_C_API kiln_status kiln_directory_tensor_count(const kiln_directory* directory,
                                                   uint32_t* count) {
  if (count == nullptr) return KILN_BAD_ARGUMENT;
  *count = 0;
  if (directory == nullptr) return KILN_BAD_ARGUMENT;
  *count = directory->directory.tensor_count();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_directory_tensor(const kiln_directory* directory, uint32_t index,
                                             kiln_tensor* out) {
  if (directory == nullptr || out == nullptr || !KnownSize<kiln_tensor>(out->struct_size)) {
    return KILN_BAD_ARGUMENT;
  }
  if (index >= directory->directory.tensor_count()) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    const kiln::Tensor t = directory->directory.tensor(index);
    const std::uint32_t struct_size = out->struct_size;
    *out = kiln_tensor{};
    out->struct_size = struct_size;
    out->index = t.index;
    out->dtype = static_cast<uint32_t>(t.dtype);
    out->dtype_name = DtypeName(t.dtype);
    out->name = t.name.empty() ? nullptr : reinterpret_cast<const uint8_t*>(t.name.data());
    out->name_length = t.name.size();
    out->rank = t.rank;
    for (std::size_t k = 0; k < kiln::kMaxRank && k < KILN_MAX_RANK; ++k) {
      out->shape[k] = t.shape[k];
    }
    out->element_count = t.element_count;
    out->byte_offset = t.byte_offset;
    out->byte_length = t.byte_length;
    out->block_offset = directory->directory.header().payload_base + t.byte_offset;
    out->payload = directory->directory.has_payloads() ? t.payload.data() : nullptr;
    out->layout = t.layout.empty() ? nullptr : reinterpret_cast<const uint8_t*>(t.layout.data());
    out->layout_length = t.layout.size();
    out->block_size = t.block_size;
    out->quant_scheme = static_cast<uint32_t>(t.quant.scheme);
    out->quant_axis = t.quant.axis;
    out->quant_group_size = t.quant.group_size;
    out->quant_scale_index = t.quant.scale_index.value_or(KILN_NO_TENSOR);
    out->quant_outer_index = t.quant.outer_index.value_or(KILN_NO_TENSOR);
    return KILN_OK;
  });
}

KILN_C_API kiln_status kiln_stream_new(const kiln_options* options, kiln_stream** out,
                                       kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (out == nullptr) return BadArgument(error, "out is NULL");
  return Guard(error, [&] {
    kiln::StreamOptions stream;
    if (!ReadOptions(options, &stream.mode, &stream.limits, error)) return KILN_BAD_ARGUMENT;
    *out = new kiln_stream(stream);
    ClearError(error);
    return KILN_OK;
  });
}

KILN_C_API void kiln_stream_free(kiln_stream* stream) { delete stream; }

KILN_C_API kiln_status kiln_stream_feed(kiln_stream* stream, const uint8_t* data, size_t size,
                                        size_t* used) {
  if (used != nullptr) *used = 0;
  if (stream == nullptr || (data == nullptr && size > 0) || stream->finished) {
    return KILN_BAD_ARGUMENT;
  }
  return Guard(nullptr, [&] {
    const std::span<const std::uint8_t> chunk =
        size == 0 ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(data, size);
    (void)stream->validator.Feed(chunk);
    if (used != nullptr) *used = stream->validator.used();
    SyncDirectory(stream);
    return StatusOf(*stream);
  });
}

KILN_C_API kiln_status kiln_stream_finish(kiln_stream* stream) {
  if (stream == nullptr) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    if (!stream->finished) {
      (void)stream->validator.Finish();
      stream->finished = true;
      SyncDirectory(stream);
    }
    return StatusOf(*stream);
  });
}

KILN_C_API kiln_status kiln_stream_status(const kiln_stream* stream) {
  if (stream == nullptr) return KILN_BAD_ARGUMENT;
  return StatusOf(*stream);
}

KILN_C_API kiln_status kiln_stream_error(const kiln_stream* stream, kiln_error* error) {
  if (error == nullptr || !ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (stream == nullptr) return BadArgument(error, "stream is NULL");
  return Guard(error, [&] {
    const kiln_status status = StatusOf(*stream);
    if (status == KILN_INVALID) {
      SetVerdict(error, stream->validator.error());
    } else {
      ClearError(error);
    }
    return status;
  });
}

KILN_C_API kiln_status kiln_stream_header(const kiln_stream* stream, kiln_header* out) {
  if (stream == nullptr || out == nullptr || !KnownSize<kiln_header>(out->struct_size)) {
    return KILN_BAD_ARGUMENT;
  }
  const std::optional<kiln::HeaderInfo>& h = stream->validator.header();
  if (!h) return KILN_NEED_MORE;
  FillHeader(*h, out);
  return KILN_OK;
}

KILN_C_API kiln_status kiln_stream_directory(const kiln_stream* stream,
                                             const kiln_directory** out) {
  if (out == nullptr) return KILN_BAD_ARGUMENT;
  *out = nullptr;
  if (stream == nullptr) return KILN_BAD_ARGUMENT;
  if (!stream->directory) {
    const kiln_status status = StatusOf(*stream);
    // kComplete always has its directory (SyncDirectory after every change).
    return status == KILN_OK ? KILN_INTERNAL_ERROR : status;
  }
  *out = &*stream->directory;
  return KILN_OK;
}

KILN_C_API kiln_status kiln_stream_consumed(const kiln_stream* stream, uint64_t* consumed) {
  if (consumed == nullptr) return KILN_BAD_ARGUMENT;
  *consumed = 0;
  if (stream == nullptr) return KILN_BAD_ARGUMENT;
  *consumed = stream->validator.consumed();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_stream_bytes_to_checkpoint(const kiln_stream* stream, uint64_t* bytes) {
  if (bytes == nullptr) return KILN_BAD_ARGUMENT;
  *bytes = 0;
  if (stream == nullptr) return KILN_BAD_ARGUMENT;
  *bytes = stream->validator.bytes_to_checkpoint();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_range_options_init(kiln_range_options* options) {
  if (options == nullptr) return KILN_BAD_ARGUMENT;
  *options = kiln_range_options{};
  options->struct_size = sizeof(kiln_range_options);
  options->merge_gap = kiln::kDefaultMergeGap;
  options->max_range = kiln::kDefaultMaxRange;
  return KILN_OK;
}

KILN_C_API kiln_status kiln_ranges_new(uint64_t file_size, const kiln_options* options,
                                       const kiln_range_options* range_options, kiln_ranges** out,
                                       kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (out == nullptr) return BadArgument(error, "out is NULL");
  return Guard(error, [&] {
    kiln::RangeOptions ranges;
    if (!ReadOptions(options, &ranges.mode, &ranges.limits, error)) return KILN_BAD_ARGUMENT;
    if (range_options != nullptr) {
      if (!KnownSize<kiln_range_options>(range_options->struct_size)) {
        return BadArgument(error,
                           "range_options->struct_size is not sizeof(kiln_range_options): "
                           "initialise range_options with kiln_range_options_init");
      }
      ranges.merge_gap = range_options->merge_gap;
      ranges.max_range = range_options->max_range;
    }
    *out = new kiln_ranges(file_size, ranges);
    SyncDirectory(*out);  // a file of 0 bytes is judged at once
    ClearError(error);
    return KILN_OK;
  });
}

KILN_C_API void kiln_ranges_free(kiln_ranges* ranges) { delete ranges; }

KILN_C_API kiln_status kiln_ranges_next(const kiln_ranges* ranges, uint64_t* offset,
                                        size_t* length) {
  if (offset != nullptr) *offset = 0;
  if (length != nullptr) *length = 0;
  if (ranges == nullptr) return KILN_BAD_ARGUMENT;
  const std::optional<kiln::ByteRange> want = ranges->validator.NextRange();
  if (want) {
    if (offset != nullptr) *offset = want->offset;
    // At most max_range, which fits a size_t (clamped).
    if (length != nullptr) *length = static_cast<size_t>(want->length);
  }
  return StatusOf(*ranges);
}

KILN_C_API kiln_status kiln_ranges_buffer(kiln_ranges* ranges, uint8_t** buffer, size_t* length) {
  if (buffer != nullptr) *buffer = nullptr;
  if (length != nullptr) *length = 0;
  if (ranges == nullptr || buffer == nullptr || length == nullptr) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    const std::span<std::uint8_t> b = ranges->validator.Buffer();
    if (!b.empty()) {
      *buffer = b.data();
      *length = b.size();
    }
    return StatusOf(*ranges);
  });
}

KILN_C_API kiln_status kiln_ranges_filled(kiln_ranges* ranges) {
  if (ranges == nullptr) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    (void)ranges->validator.Filled();
    return SyncDirectory(ranges);
  });
}

KILN_C_API kiln_status kiln_ranges_provide(kiln_ranges* ranges, const uint8_t* data, size_t size) {
  if (ranges == nullptr || (data == nullptr && size > 0)) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    const std::span<const std::uint8_t> bytes =
        size == 0 ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(data, size);
    (void)ranges->validator.Provide(bytes);
    return SyncDirectory(ranges);
  });
}

KILN_C_API kiln_status kiln_ranges_fail(kiln_ranges* ranges, const char* message, size_t length) {
  if (ranges == nullptr || (message == nullptr && length > 0)) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    (void)ranges->validator.ReaderFailed(length == 0 ? std::string()
                                                     : std::string(message, length));
    return StatusOf(*ranges);
  });
}

KILN_C_API kiln_status kiln_ranges_status(const kiln_ranges* ranges) {
  if (ranges == nullptr) return KILN_BAD_ARGUMENT;
  return StatusOf(*ranges);
}

KILN_C_API kiln_status kiln_ranges_error(const kiln_ranges* ranges, kiln_error* error) {
  if (error == nullptr || !ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (ranges == nullptr) return BadArgument(error, "ranges is NULL");
  return Guard(error, [&] {
    const kiln_status status = StatusOf(*ranges);
    if (status == KILN_INVALID) {
      SetVerdict(error, ranges->validator.error());
    } else if (status == KILN_READ_FAILED) {
      kiln::capi::SetOther(error, KILN_CLASS_IO, ranges->validator.read_error());
    } else {
      ClearError(error);
    }
    return status;
  });
}

KILN_C_API kiln_status kiln_ranges_header(const kiln_ranges* ranges, kiln_header* out) {
  if (ranges == nullptr || out == nullptr || !KnownSize<kiln_header>(out->struct_size)) {
    return KILN_BAD_ARGUMENT;
  }
  const std::optional<kiln::HeaderInfo>& h = ranges->validator.header();
  if (!h) return StatusOf(*ranges);
  FillHeader(*h, out);
  return KILN_OK;
}

KILN_C_API kiln_status kiln_ranges_directory(const kiln_ranges* ranges,
                                             const kiln_directory** out) {
  if (out == nullptr) return KILN_BAD_ARGUMENT;
  *out = nullptr;
  if (ranges == nullptr) return KILN_BAD_ARGUMENT;
  if (!ranges->directory) {
    const kiln_status status = StatusOf(*ranges);
    return status == KILN_OK ? KILN_INTERNAL_ERROR : status;
  }
  *out = &*ranges->directory;
  return KILN_OK;
}

KILN_C_API kiln_status kiln_ranges_read(const kiln_ranges* ranges, uint64_t* reads,
                                        uint64_t* bytes) {
  if (reads != nullptr) *reads = 0;
  if (bytes != nullptr) *bytes = 0;
  if (ranges == nullptr) return KILN_BAD_ARGUMENT;
  if (reads != nullptr) *reads = ranges->validator.reads();
  if (bytes != nullptr) *bytes = ranges->validator.bytes_read();
  return KILN_OK;
}

}  // extern "C"
