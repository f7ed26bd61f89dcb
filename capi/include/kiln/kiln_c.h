/* kiln's stable C ABI (C99): validate a Kiln v2 tensor directory held in a
 * buffer, arriving as a stream or read by ranges, and walk the validated
 * directory.
 *
 * The verdicts are those of the C++ library and of `kiln validate`: the same
 * class, rule id, byte offset, tensor and message for every input.
 *
 * Conventions (they hold for every function below, and in kiln_c_map.h):
 * - Every function that can fail returns a kiln_status. What it produces
 *   (an object, a count, a length, a view) goes through an out-parameter,
 *   set on KILN_OK. The only functions that return something else cannot
 *   fail: the version getters, the names of codes (kiln_error_class_name)
 *   and the frees.
 * - Every struct that crosses the boundary, in either direction, starts
 *   with uint32_t struct_size. The caller sets it to sizeof the struct
 *   before the call (kiln_options_init does it for options); the library
 *   checks it and never changes it. A size the library does not know is
 *   KILN_BAD_ARGUMENT, with nothing written to that struct (docs/c-api.md,
 *   "Compatibility").
 * - Nothing here throws, aborts or reads past a length it was given. A
 *   caller mistake (a null pointer where one is required, a call out of
 *   order, a wrong struct_size) is answered with KILN_BAD_ARGUMENT and,
 *   where the function takes a kiln_error, an error of class
 *   KILN_CLASS_ARGUMENT whose message names the argument.
 * - Strings kiln hands out (names, layout names) are pointer + length: a
 *   valid name may hold a NUL byte, so nothing assumes C strings. They are
 *   views: into the caller's buffer for kiln_parse, into the stream's kept
 *   bytes for a stream; they live as long as that memory.
 * - Every object a kiln_*_new / kiln_parse creates is freed by its own
 *   kiln_*_free, which accepts NULL. Errors are plain structs the caller
 *   owns: no free.
 * - A C++ exception never crosses this boundary: std::bad_alloc is
 *   KILN_NO_MEMORY (error class NONE, message "out of memory"), any other is
 *   KILN_INTERNAL_ERROR (class KILN_CLASS_INTERNAL, its text); neither is a
 *   verdict on the bytes, and nothing was changed.
 * - The library keeps no global state: objects may be used from several
 *   threads as long as one object is not used by two threads at once.
 * docs/c-api.md has the whole contract (linking, versioning, streams).
 */
#ifndef KILN_KILN_C_H_
#define KILN_KILN_C_H_

#include <stddef.h>
#include <stdint.h>

/* The library version (capi/CMakeLists.txt checks it is the project's). */
#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0
#define KILN_VERSION_NUMBER \
  (KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH)
#define KILN_C_STRINGIFY_(x) #x
#define KILN_C_STRINGIFY(x) KILN_C_STRINGIFY_(x)
#define KILN_VERSION_STRING            \
  KILN_C_STRINGIFY(KILN_VERSION_MAJOR) \
  "." KILN_C_STRINGIFY(KILN_VERSION_MINOR) "." KILN_C_STRINGIFY(KILN_VERSION_PATCH)

/* Raised when the ABI changes incompatibly (the soname follows it). */
#define KILN_ABI_VERSION 2

/* What the library exports: the functions below, nothing else. A build
 * may define KILN_C_API itself (for instance to an import attribute). */
#ifndef KILN_C_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define KILN_C_API __attribute__((visibility("default")))
#else
#define KILN_C_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What every function that can fail returns. */
typedef enum kiln_status {
  KILN_OK = 0,           /* valid (or: the call succeeded) */
  KILN_INVALID = 1,      /* the block broke a rule; the error says which */
  KILN_NEED_MORE = 2,    /* a stream: no verdict yet, feed more or finish */
  KILN_BAD_ARGUMENT = 3, /* a caller mistake; nothing was changed */
  KILN_NO_MEMORY = 4,    /* an allocation failed; nothing was changed */
  /* A defect in kiln (an unexpected C++ exception was caught at the
   * boundary); the error, if any, has class KILN_CLASS_INTERNAL. Never a
   * verdict on the bytes. */
  KILN_INTERNAL_ERROR = 5,
  /* The caller's output buffer is too small; the length out-parameter says
   * how many bytes the result needs (kiln_escape). */
  KILN_BUFFER_TOO_SMALL = 6,
  /* A range validator: the caller's reader failed, or handed over another
   * number of bytes than the range wanted (kiln_ranges_fail,
   * kiln_ranges_provide). Never a verdict on the bytes; the error has class
   * KILN_CLASS_IO and says why. */
  KILN_READ_FAILED = 7
} kiln_status;

/* The error classes of the rule set, and two that are not verdicts. */
typedef enum kiln_error_class {
  KILN_CLASS_NONE = 0,
  KILN_CLASS_FRAME = 1,
  KILN_CLASS_TYPE = 2,
  KILN_CLASS_LIMIT = 3,
  KILN_CLASS_UTF8 = 4,
  KILN_CLASS_ARGUMENT = 5, /* not a verdict on the bytes: a caller mistake */
  KILN_CLASS_INTERNAL = 6, /* not a verdict on the bytes: KILN_INTERNAL_ERROR */
  KILN_CLASS_IO = 7        /* not a verdict on the bytes: KILN_READ_FAILED */
} kiln_error_class;

#define KILN_NO_TENSOR 0xFFFFFFFFu
#define KILN_MESSAGE_CAPACITY 1024

/* Why a block was rejected. Caller-owned (set struct_size); filled by the
 * functions that take a kiln_error *, cleared (class NONE, rule "", tensor
 * KILN_NO_TENSOR, empty message) when they succeed. */
typedef struct kiln_error {
  uint32_t struct_size;       /* sizeof(kiln_error), set by the caller */
  int32_t error_class;        /* kiln_error_class */
  char rule[4];               /* "H1" .. "P2", NUL-terminated; "" for the other classes */
  uint32_t tensor;            /* descriptor index, or KILN_NO_TENSOR */
  uint64_t offset;            /* byte offset from the start of the block */
  uint32_t message_truncated; /* 1 when message was cut to fit */
  uint32_t reserved;          /* 0 */
  size_t message_length;      /* bytes in message, excluding the NUL */
  /* The field and the values it held, escaped as `kiln validate` prints
   * it, NUL-terminated; cut at a UTF-8 boundary if longer than the
   * capacity. */
  char message[KILN_MESSAGE_CAPACITY];
} kiln_error;

#define KILN_MODE_WHOLE 0  /* the buffer is exactly one block */
#define KILN_MODE_PREFIX 1 /* the block starts the buffer; bytes may follow */

/* Options and the caller's limits (exceeding one is LIMIT H7). Initialise
 * with kiln_options_init: the format's maxima, whole mode. */
typedef struct kiln_options {
  uint32_t struct_size; /* sizeof(kiln_options), set by kiln_options_init */
  uint32_t mode;        /* KILN_MODE_WHOLE or KILN_MODE_PREFIX */
  uint64_t max_tensors;
  uint64_t max_name_bytes;
  uint64_t max_block_bytes;
} kiln_options;

/* The header fields of a block whose header rules held. */
typedef struct kiln_header {
  uint32_t struct_size; /* sizeof(kiln_header), set by the caller */
  uint32_t flags;
  uint32_t tensor_count;
  uint32_t name_bytes;
  uint32_t has_names; /* flags & 0x01 */
  uint32_t reserved;  /* 0 */
  uint64_t payload_bytes;
  uint64_t directory_bytes;
  uint64_t payload_base; /* where the payload region starts */
  uint64_t block_length; /* payload_base + payload_bytes */
} kiln_header;

#define KILN_MAX_RANK 8

#define KILN_QUANT_NONE 0
#define KILN_QUANT_PER_AXIS 1
#define KILN_QUANT_GROUPED 2

/* One tensor of a validated directory. */
typedef struct kiln_tensor {
  uint32_t struct_size; /* sizeof(kiln_tensor), set by the caller */
  uint32_t index;
  uint32_t dtype; /* the format's dtype code */
  uint32_t rank;
  const char *dtype_name; /* static, NUL-terminated: "f32", "q8_0", ... */
  const uint8_t *name;    /* view; name_length 0 when the block has no names */
  size_t name_length;
  uint64_t shape[KILN_MAX_RANK]; /* slots >= rank are 0 */
  uint64_t element_count;
  uint64_t byte_offset; /* from the start of the payload region */
  uint64_t byte_length;
  uint64_t block_offset;  /* from the start of the block: payload_base + byte_offset */
  const uint8_t *payload; /* view into the caller's buffer; NULL from a stream */
  const uint8_t *layout;  /* opaque dtypes: the layout name (view), else length 0 */
  size_t layout_length;
  uint32_t block_size;   /* opaque dtypes only */
  uint32_t quant_scheme; /* KILN_QUANT_* */
  uint32_t quant_axis;   /* 0xFFFF when none */
  uint32_t quant_group_size;
  uint32_t quant_scale_index; /* KILN_NO_TENSOR when none */
  uint32_t quant_outer_index; /* KILN_NO_TENSOR when none */
} kiln_tensor;

/* KILN_VERSION_STRING of the library actually loaded ("0.1.0"), static. */
KILN_C_API const char *kiln_version(void);
/* KILN_VERSION_NUMBER of the library actually loaded. */
KILN_C_API uint32_t kiln_version_number(void);
/* KILN_ABI_VERSION of the library actually loaded. */
KILN_C_API uint32_t kiln_abi_version(void);
/* "FRAME", "TYPE", "LIMIT", "UTF8", "ARGUMENT", "INTERNAL", "IO", or ""
 * (static). */
KILN_C_API const char *kiln_error_class_name(int32_t error_class);

/* The one-line statement of rule[0, length) ("H1".."P2") in *summary
 * (static, NUL-terminated). KILN_BAD_ARGUMENT (*summary NULL) when there
 * is no such rule, rule is NULL or summary is NULL. */
KILN_C_API kiln_status kiln_rule_summary(const char *rule, size_t length, const char **summary);

/* text[0, length) made safe for a terminal, as kiln prints untrusted text
 * (a file name, a tensor name): backslash doubled, control bytes and bytes
 * that are not well-formed UTF-8 as \xNN, invisible and bidi characters as
 * \u{NNNN}. *escaped_length gets the escaped length (excluding the NUL).
 * - KILN_OK: out held it (the escaped text and a NUL); or out is NULL and
 *   capacity 0, a measurement.
 * - KILN_BUFFER_TOO_SMALL: out[0, capacity) cannot hold it and a NUL
 *   (*escaped_length >= capacity); out is "" when capacity > 0.
 * - KILN_BAD_ARGUMENT: text NULL with length > 0, out NULL with capacity
 *   > 0, escaped_length NULL. KILN_NO_MEMORY. */
KILN_C_API kiln_status kiln_escape(const uint8_t *text, size_t length, char *out, size_t capacity,
                                   size_t *escaped_length);

/* The format's maxima, whole mode, struct_size set. KILN_BAD_ARGUMENT for
 * NULL. */
KILN_C_API kiln_status kiln_options_init(kiln_options *options);

/* Validates data[0, size). options may be NULL (defaults); error may be
 * NULL. KILN_OK or KILN_INVALID (error filled), or KILN_BAD_ARGUMENT
 * (data NULL with size > 0, bad options). Allocates at most 16 bytes per
 * tensor, freed before it returns. */
KILN_C_API kiln_status kiln_validate(const uint8_t *data, size_t size, const kiln_options *options,
                                     kiln_error *error);

/* A validated directory (opaque). */
typedef struct kiln_directory kiln_directory;

/* As kiln_validate, and on KILN_OK stores a new directory in *out (which
 * refers to data: data must outlive it and not change). *out is NULL on
 * any other status; out NULL is KILN_BAD_ARGUMENT. Free it with
 * kiln_directory_free. */
KILN_C_API kiln_status kiln_parse(const uint8_t *data, size_t size, const kiln_options *options,
                                  kiln_directory **out, kiln_error *error);
KILN_C_API void kiln_directory_free(kiln_directory *directory);

KILN_C_API kiln_status kiln_directory_header(const kiln_directory *directory, kiln_header *out);
KILN_C_API kiln_status kiln_directory_tensor_count(const kiln_directory *directory,
                                                   uint32_t *count);
/* Tensor `index` < tensor_count; KILN_BAD_ARGUMENT otherwise. */
KILN_C_API kiln_status kiln_directory_tensor(const kiln_directory *directory, uint32_t index,
                                             kiln_tensor *out);

/* The streaming validator: feed chunks in order; it keeps the header and
 * the directory region (never a payload byte). Verdicts as kiln_validate's
 * on the same bytes, however they are cut (docs/spec.md, section 5.1). */
typedef struct kiln_stream kiln_stream;

/* A new validator in *out (NULL on any other status). options may be NULL
 * (defaults); error may be NULL. KILN_BAD_ARGUMENT (out NULL, bad options;
 * the error names the argument) or KILN_NO_MEMORY. */
KILN_C_API kiln_status kiln_stream_new(const kiln_options *options, kiln_stream **out,
                                       kiln_error *error);
KILN_C_API void kiln_stream_free(kiln_stream *stream);

/* The next size bytes. Returns the status after them: KILN_NEED_MORE,
 * KILN_INVALID or KILN_OK (block_length bytes arrived and every rule
 * held). *used (may be NULL) is how many bytes of this chunk were taken.
 * After kiln_stream_finish: KILN_BAD_ARGUMENT, nothing taken. */
KILN_C_API kiln_status kiln_stream_feed(kiln_stream *stream, const uint8_t *data, size_t size,
                                        size_t *used);
/* The stream has ended: KILN_NEED_MORE becomes the truncation verdict.
 * Returns the final status (KILN_OK or KILN_INVALID). Calling it again
 * returns the same status. */
KILN_C_API kiln_status kiln_stream_finish(kiln_stream *stream);
/* The current status, without changing anything. */
KILN_C_API kiln_status kiln_stream_status(const kiln_stream *stream);
/* The stream's status, with its verdict in *error: KILN_INVALID and the
 * error filled, or KILN_NEED_MORE / KILN_OK and the error cleared.
 * KILN_BAD_ARGUMENT for a NULL stream or error. */
KILN_C_API kiln_status kiln_stream_error(const kiln_stream *stream, kiln_error *error);
/* The header, once its rules held (byte 64): KILN_OK; else KILN_NEED_MORE
 * (nothing written). */
KILN_C_API kiln_status kiln_stream_header(const kiln_stream *stream, kiln_header *out);
/* The validated directory (payload views NULL) in *out, owned by the
 * stream and valid until kiln_stream_free, while the status is KILN_OK.
 * Otherwise the stream's status (KILN_NEED_MORE or KILN_INVALID) and *out
 * NULL. */
KILN_C_API kiln_status kiln_stream_directory(const kiln_stream *stream, const kiln_directory **out);
/* Bytes taken so far. */
KILN_C_API kiln_status kiln_stream_consumed(const kiln_stream *stream, uint64_t *consumed);
/* How many more bytes may be fed before the next point where a verdict can
 * be decided (0 once settled). */
KILN_C_API kiln_status kiln_stream_bytes_to_checkpoint(const kiln_stream *stream, uint64_t *bytes);

/* Random-access validation (docs/spec.md, section 5.2; docs/c-api.md,
 * "Random access"): given the file's size, the validator asks for the byte
 * ranges its rules read, one at a time (the header; the directory region up
 * to payload_base; the payload bytes no tensor covers, for P2), never a
 * byte only a tensor covers unless merge_gap allows it. The caller reads
 * each range however it can (pread, an HTTP range request, ...) and hands
 * the bytes over. The verdict is kiln_validate's on the whole file: class,
 * rule, offset, tensor and message; the size stands for the buffer's length
 * in H8. A pull API: no callbacks, so synchronous and asynchronous readers
 * alike.
 *
 *   kiln_ranges *r;  uint64_t at;  size_t n;  uint8_t *buf;
 *   kiln_ranges_new(file_size, NULL, NULL, &r, &error);
 *   while (kiln_ranges_next(r, &at, &n) == KILN_NEED_MORE) {
 *     kiln_ranges_buffer(r, &buf, &n);
 *     if (pread(fd, buf, n, at) == (ssize_t)n) kiln_ranges_filled(r);
 *     else kiln_ranges_fail(r, "short read", 10);
 *   }
 *   status = kiln_ranges_error(r, &error);  (OK, INVALID or READ_FAILED)
 *   kiln_ranges_free(r);
 */
typedef struct kiln_ranges kiln_ranges;

/* How the validator cuts its reads. Initialise with
 * kiln_range_options_init (the defaults below). */
typedef struct kiln_range_options {
  uint32_t struct_size; /* sizeof(kiln_range_options), set by kiln_range_options_init */
  uint32_t reserved;    /* 0 */
  /* Two wanted payload ranges closer than this many bytes are read in one
   * request (the covered bytes between them are read, never looked at).
   * 0: never, and no byte a tensor covers is requested. Default 65536;
   * clamped to max_range / 2. */
  uint64_t merge_gap;
  /* The longest single request (the handle's buffer holds at most this many
   * bytes). Default 1048576; clamped to [1, SIZE_MAX]. */
  uint64_t max_range;
} kiln_range_options;

/* The defaults, struct_size set. KILN_BAD_ARGUMENT for NULL. */
KILN_C_API kiln_status kiln_range_options_init(kiln_range_options *options);

/* A new validator for a file of file_size bytes in *out (NULL on any other
 * status). options and range_options may be NULL (defaults); error may be
 * NULL. KILN_BAD_ARGUMENT (out NULL, bad options or range_options; the
 * error names the argument) or KILN_NO_MEMORY. A file of 0 bytes is judged
 * at once (no range is wanted). Free it with kiln_ranges_free. */
KILN_C_API kiln_status kiln_ranges_new(uint64_t file_size, const kiln_options *options,
                                       const kiln_range_options *range_options, kiln_ranges **out,
                                       kiln_error *error);
KILN_C_API void kiln_ranges_free(kiln_ranges *ranges);

/* The range wanted now: KILN_NEED_MORE with *offset and *length set (1 to
 * max_range bytes; the header: up to 64). Otherwise the settled status
 * (KILN_OK, KILN_INVALID or KILN_READ_FAILED) and both 0. The ranges are
 * disjoint, increasing and inside [0, file_size). offset and length may be
 * NULL. */
KILN_C_API kiln_status kiln_ranges_next(const kiln_ranges *ranges, uint64_t *offset,
                                        size_t *length);
/* Storage for the wanted range's bytes, owned by the handle: *buffer points
 * to exactly *length bytes (the range's length), writable until the next
 * kiln_ranges_filled, kiln_ranges_provide, kiln_ranges_fail or
 * kiln_ranges_free. KILN_NEED_MORE; once settled, the status and *buffer
 * NULL, *length 0. */
KILN_C_API kiln_status kiln_ranges_buffer(kiln_ranges *ranges, uint8_t **buffer, size_t *length);
/* The buffer now holds the wanted bytes: checks them and plans the next
 * range. Returns the new status (KILN_NEED_MORE, KILN_OK, KILN_INVALID).
 * Once settled: the status, nothing changed. */
KILN_C_API kiln_status kiln_ranges_filled(kiln_ranges *ranges);
/* The wanted bytes from the caller's memory (copied), then as
 * kiln_ranges_filled. size other than the wanted length is KILN_READ_FAILED
 * (the reader misbehaved; never a verdict). data NULL with size > 0:
 * KILN_BAD_ARGUMENT, nothing changed. */
KILN_C_API kiln_status kiln_ranges_provide(kiln_ranges *ranges, const uint8_t *data, size_t size);
/* The caller could not read the wanted range: KILN_READ_FAILED, with
 * message[0, length) (may be NULL and 0: "the reader failed") as the
 * error's message. Once settled: the status, nothing changed. */
KILN_C_API kiln_status kiln_ranges_fail(kiln_ranges *ranges, const char *message, size_t length);
/* The current status, without changing anything. */
KILN_C_API kiln_status kiln_ranges_status(const kiln_ranges *ranges);
/* The status, with its verdict in *error: KILN_INVALID and the verdict,
 * KILN_READ_FAILED and class KILN_CLASS_IO with the reader's message, or
 * KILN_NEED_MORE / KILN_OK and the error cleared. KILN_BAD_ARGUMENT for a
 * NULL ranges or error. */
KILN_C_API kiln_status kiln_ranges_error(const kiln_ranges *ranges, kiln_error *error);
/* The header, once its rules held: KILN_OK; else the status (nothing
 * written) or KILN_BAD_ARGUMENT. */
KILN_C_API kiln_status kiln_ranges_header(const kiln_ranges *ranges, kiln_header *out);
/* The validated directory (payload views NULL) in *out, owned by the
 * handle and valid until kiln_ranges_free, while the status is KILN_OK.
 * Otherwise the status and *out NULL. */
KILN_C_API kiln_status kiln_ranges_directory(const kiln_ranges *ranges, const kiln_directory **out);
/* Requests answered so far and their bytes (either may be NULL). */
KILN_C_API kiln_status kiln_ranges_read(const kiln_ranges *ranges, uint64_t *reads,
                                        uint64_t *bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_C_H_ */
