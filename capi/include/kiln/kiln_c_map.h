/* kiln's block map through the C ABI (C99): a block described as byte
 * regions (header, descriptors, name heap, padding, payloads, gaps,
 * trailing or missing bytes), with the deciding byte of a rejection and the
 * field it belongs to. The same description `kiln inspect --map` draws.
 *
 * The conventions of kiln/kiln_c.h hold: a kiln_status from every function
 * that can fail, results through out-parameters; struct_size first in every
 * struct (set by the caller); nothing throws or aborts; a caller mistake is
 * KILN_BAD_ARGUMENT; strings are pointer + length (also NUL-terminated here)
 * and escaped as `kiln validate` escapes names; the map owns them and they
 * live until kiln_block_map_free.
 */
#ifndef KILN_KILN_C_MAP_H_
#define KILN_KILN_C_MAP_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln_c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_region_kind {
  KILN_REGION_HEADER = 0,
  KILN_REGION_DESCRIPTOR = 1,
  KILN_REGION_NAME_HEAP = 2,
  KILN_REGION_PADDING = 3,
  KILN_REGION_PAYLOAD = 4,
  KILN_REGION_GAP = 5,      /* payload bytes no tensor covers */
  KILN_REGION_TRAILING = 6, /* bytes after block_length */
  KILN_REGION_MISSING = 7,  /* declared by the header, not in the file */
  KILN_REGION_UNKNOWN = 8   /* the header broke a rule: layout unknown */
} kiln_region_kind;

/* One region: [begin, end) from the start of the file. */
typedef struct kiln_region {
  uint32_t struct_size; /* sizeof(kiln_region), set by the caller */
  int32_t kind;         /* kiln_region_kind */
  uint32_t tensor;      /* descriptor index, or KILN_NO_TENSOR */
  uint32_t reserved;    /* 0 */
  uint64_t begin;
  uint64_t end;
  const char *label; /* owned by the map */
  size_t label_length;
} kiln_region;

/* The deciding byte of a rejection. */
typedef struct kiln_map_mark {
  uint32_t struct_size; /* sizeof(kiln_map_mark), set by the caller */
  uint32_t present;     /* 0 for a valid block: nothing else is set */
  uint32_t tensor;      /* KILN_NO_TENSOR when the rule names none */
  uint32_t reserved;    /* 0 */
  uint64_t offset;
  const char *field; /* "descriptor 0, byte_length (bytes 40..47)"; owned by the map */
  size_t field_length;
} kiln_map_mark;

typedef struct kiln_block_map kiln_block_map;

/* Describes the file whose first prefix_size bytes are prefix and whose
 * length is file_size (prefix_size <= file_size; the whole file, or at least
 * its first payload_base bytes, for names and payload ranges). verdict is
 * the file's verdict (from kiln_validate or a stream, struct_size set), or
 * NULL for a valid block; a verdict of class KILN_CLASS_NONE is a valid
 * block too. Stores a new map in *out (NULL on any other status). error may
 * be NULL. KILN_BAD_ARGUMENT, the error naming the argument: out NULL,
 * prefix NULL with prefix_size > 0, prefix_size > file_size, a verdict
 * with a wrong struct_size, class ARGUMENT or an unknown rule. The map
 * copies what it needs: prefix may be freed after the call. The verdict is
 * the caller's word: a NULL verdict over bytes that break a rule draws them
 * as a valid block (every read stays within prefix). A caller that
 * validated by random access has the validator's own: kiln_ranges_block_map. */
KILN_C_API kiln_status kiln_block_map_new(const uint8_t *prefix, size_t prefix_size,
                                          uint64_t file_size, const kiln_error *verdict,
                                          kiln_block_map **out, kiln_error *error);
/* The block a settled range validator (kiln_c.h, "Random access") decided
 * on, from the bytes it kept and its own verdict: nothing is read again and
 * no verdict is handed over. Stores a new map in *out (NULL on any other
 * status); ranges may be freed after the call. error may be NULL.
 * KILN_BAD_ARGUMENT: ranges or out NULL, or ranges without a verdict (still
 * wanting a range, or its reader failed). */
KILN_C_API kiln_status kiln_ranges_block_map(const kiln_ranges *ranges, kiln_block_map **out,
                                             kiln_error *error);
KILN_C_API void kiln_block_map_free(kiln_block_map *map);

KILN_C_API kiln_status kiln_block_map_region_count(const kiln_block_map *map, uint32_t *count);
/* Region `index` < region_count; KILN_BAD_ARGUMENT otherwise. */
KILN_C_API kiln_status kiln_block_map_region(const kiln_block_map *map, uint32_t index,
                                             kiln_region *out);
/* The mark (present 0 for a valid block). */
KILN_C_API kiln_status kiln_block_map_mark(const kiln_block_map *map, kiln_map_mark *out);
/* The whole map as one JSON document (UTF-8, NUL-terminated) in *json,
 * owned by the map: {"file_size", "header": {...} or null, "regions":
 * [{"kind", "begin", "end", "tensor", "label"}], "mark": {...} or null}.
 * Offsets above 2^53 are written as decimal strings. *length (may be NULL)
 * gets its length. */
KILN_C_API kiln_status kiln_block_map_json(const kiln_block_map *map, const char **json,
                                           size_t *length);
/* The map drawn as a standalone SVG document (UTF-8, NUL-terminated), the
 * one drawing of the map: what `kiln inspect --map` writes, and what the
 * browser page shows. title (title_length bytes, escaped here as names are;
 * may be NULL when title_length is 0) names the file. *svg is owned by the
 * map and lives until the next kiln_block_map_svg on it or
 * kiln_block_map_free (so two threads must not call it on one map at once).
 * *length (may be NULL) gets its length. */
KILN_C_API kiln_status kiln_block_map_svg(kiln_block_map *map, const char *title,
                                          size_t title_length, const char **svg, size_t *length);
/* "header", "descriptor", "name-heap", "padding", "payload", "gap",
 * "trailing", "missing", "unknown"; "" for another value (static). */
KILN_C_API const char *kiln_region_kind_name(int32_t kind);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_C_MAP_H_ */
