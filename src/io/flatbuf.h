/* A tiny flatbuffer toolkit written for the training checkpoint: a verifying reader (every
 * offset, vtable, vector and string bounds- and alignment-checked before use) and a
 * back-to-front builder (vtables deduplicated, scalars and vectors aligned, root + identifier). */
#ifndef WT_IO_FLATBUF_H
#define WT_IO_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* ---- reader ------------------------------------------------------------------------------ */

typedef struct wt_fb_reader {
  const uint8_t *p;
  uint64_t len;
  const char *prefix;  /* message prefix, e.g. "checkpoint" */
  uint64_t *need;      /* optional: raised to the buffer size a read past the end needed */
} wt_fb_reader;

typedef struct wt_fb_table {
  uint64_t pos;        /* the table's position (its soffset to the vtable) */
  uint64_t vt;         /* the vtable's position */
  uint32_t vt_size, obj_size;
} wt_fb_table;

typedef struct wt_fb_vec {
  uint64_t pos;        /* the first element (just after the 32-bit length) */
  uint32_t n;
} wt_fb_vec;

/* Little-endian loads; the caller guarantees pos + size <= len. */
uint16_t wt_fb_u16(const uint8_t *p);
uint32_t wt_fb_u32(const uint8_t *p);
uint64_t wt_fb_u64(const uint8_t *p);

/* Checks the buffer holds a root offset and the 4-byte identifier; sets *root. */
WT_NODISCARD int wt_fb_root(const wt_fb_reader *r, const char *ident, wt_fb_table *root);
/* The table at pos (vtable, sizes and alignment checked). `what` names it in messages. */
WT_NODISCARD int wt_fb_table_at(const wt_fb_reader *r, uint64_t pos, const char *what, wt_fb_table *t);
/* Scalar field `id` of `size` bytes (1, 4 or 8), zero-extended into *out; *present tells
 * whether it is stored (absent: caller's default). */
WT_NODISCARD int wt_fb_scalar(const wt_fb_reader *r, const wt_fb_table *t, int id, int size, const char *what,
                 uint64_t *out, int *present);
/* Offset field `id` -> position it points to (0 when absent). */
WT_NODISCARD int wt_fb_ref(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
              uint64_t *target);
/* Sub-table / vector / string fields; absent: *present = 0 (tables/vectors), *s = NULL. */
WT_NODISCARD int wt_fb_subtable(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
                   wt_fb_table *out, int *present);
WT_NODISCARD int wt_fb_vector(const wt_fb_reader *r, const wt_fb_table *t, int id, uint32_t elem_size,
                 const char *what, wt_fb_vec *out, int *present);
WT_NODISCARD int wt_fb_string(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
                 const char **s, uint32_t *len);
/* Element i of a vector of tables. */
WT_NODISCARD int wt_fb_vec_table(const wt_fb_reader *r, const wt_fb_vec *v, uint32_t i, const char *what,
                    wt_fb_table *out);

/* ---- builder ----------------------------------------------------------------------------- */

#define WT_FB_MAX_FIELDS 16

/* A "ref" is an object's distance from the end of the buffer; it stays valid as the buffer
 * grows towards its front. */
typedef uint32_t wt_fb_ref_t;

typedef struct wt_fb_builder {
  uint8_t *buf;        /* data lives in buf[cap - used, cap) */
  size_t cap, used;
  size_t minalign;
  int failed;          /* out of memory or over 2 GB: every later call is a no-op */
  uint32_t field_ref[WT_FB_MAX_FIELDS];  /* ref of each field of the open table (0 absent) */
  int n_fields;
  uint32_t table_start;
  uint32_t *vtables;   /* refs of written vtables (for deduplication) */
  size_t n_vtables, cap_vtables;
} wt_fb_builder;

void wt_fb_builder_init(wt_fb_builder *b);
void wt_fb_builder_free(wt_fb_builder *b);
wt_fb_ref_t wt_fb_create_string(wt_fb_builder *b, const char *s);
/* A vector of n scalars (elem_size 1, 4 or 8, little-endian host data copied as is). */
wt_fb_ref_t wt_fb_create_vector(wt_fb_builder *b, const void *data, uint32_t n, uint32_t elem_size);
/* The same with the elements aligned to `align` (a power of two; a schema's force_align). */
wt_fb_ref_t wt_fb_create_vector_aligned(wt_fb_builder *b, const void *data, uint32_t n, uint32_t elem_size,
                                        uint32_t align);
/* A vector of offsets to objects created earlier. */
wt_fb_ref_t wt_fb_create_ref_vector(wt_fb_builder *b, const wt_fb_ref_t *refs, uint32_t n);
void wt_fb_start_table(wt_fb_builder *b);
void wt_fb_add_scalar(wt_fb_builder *b, int id, const void *value, int size);
void wt_fb_add_ref(wt_fb_builder *b, int id, wt_fb_ref_t ref);
wt_fb_ref_t wt_fb_end_table(wt_fb_builder *b);
/* Writes the root offset and identifier; on success *out (malloc'd) holds the buffer. */
WT_NODISCARD int wt_fb_finish(wt_fb_builder *b, wt_fb_ref_t root, const char *ident, uint8_t **out,
                 size_t *len);

#endif
