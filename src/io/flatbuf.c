/* A tiny flatbuffer reader/builder (no flatbuffers library): the reader checks what the
 * generated verifiers check (bounds, alignment, vtable sizes, NUL-terminated strings) before
 * every use; the builder lays objects out back to front as flatc's builders do. */
#include "io/flatbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "flatbuf.c assumes a little-endian host (x86, ARM, WebAssembly)"
#endif

#define FB_MAX_SIZE 0x7fffffffu /* flatbuffers are limited to 2 GB - 1 */

uint16_t wt_fb_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
uint32_t wt_fb_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
uint64_t wt_fb_u64(const uint8_t *p) { return wt_fb_u32(p) | ((uint64_t)wt_fb_u32(p + 4) << 32); }

static int fb_err(const wt_fb_reader *r, const char *what, const char *problem, uint64_t at) {
  return wt_errorf(WT_ERR_PARSE, "%s: %s: %s (at byte %llu of %llu)", r->prefix, what, problem,
                   (unsigned long long)at, (unsigned long long)r->len);
}

/* A read past the end: also records the size the buffer would have needed (a truncated file). */
static int fb_short(const wt_fb_reader *r, const char *what, const char *problem, uint64_t at,
                    uint64_t need) {
  if (r->need && need > *r->need) *r->need = need;
  return fb_err(r, what, problem, at);
}

int wt_fb_root(const wt_fb_reader *r, const char *ident, wt_fb_table *root) {
  if (r->len < 8 && r->need && *r->need < 8) *r->need = 8;
  if (r->len < 8)
    return wt_errorf(WT_ERR_PARSE, "%s: %llu bytes is too short for a flatbuffer (needs a root "
                     "offset and a file identifier)", r->prefix, (unsigned long long)r->len);
  if (r->len > FB_MAX_SIZE)
    return wt_errorf(WT_ERR_PARSE, "%s: %llu bytes exceeds the 2 GB flatbuffer limit", r->prefix,
                     (unsigned long long)r->len);
  if (memcmp(r->p + 4, ident, 4) != 0) {
    char shown[20];
    int k = 0;
    for (int i = 4; i < 8; i++) {
      uint8_t c = r->p[i];
      if (c >= 0x20 && c < 0x7f && c != '\'') shown[k++] = (char)c;
      else k += snprintf(shown + k, sizeof shown - (size_t)k, "\\x%02x", c);
    }
    shown[k] = 0;
    return wt_errorf(WT_ERR_PARSE, "%s: file identifier is '%s', expected '%.4s' (not an ONNX "
                     "Runtime training checkpoint?)", r->prefix, shown, ident);
  }
  return wt_fb_table_at(r, wt_fb_u32(r->p), "root table", root);
}

int wt_fb_table_at(const wt_fb_reader *r, uint64_t pos, const char *what, wt_fb_table *t) {
  if (pos % 4 || pos + 4 > r->len)
    return fb_short(r, what, "table offset out of bounds or misaligned", pos, pos % 4 ? 0 : pos + 4);
  int64_t vt = (int64_t)pos - (int64_t)(int32_t)wt_fb_u32(r->p + pos);
  if (vt < 0 || vt % 2 || (uint64_t)vt + 4 > r->len)
    return fb_short(r, what, "vtable offset out of bounds or misaligned", pos, vt < 0 || vt % 2 ? 0 : (uint64_t)vt + 4);
  t->pos = pos;
  t->vt = (uint64_t)vt;
  t->vt_size = wt_fb_u16(r->p + t->vt);
  t->obj_size = wt_fb_u16(r->p + t->vt + 2);
  if (t->vt_size < 4 || t->vt_size % 2 || t->vt + t->vt_size > r->len)
    return fb_short(r, what, "vtable size is invalid or runs past the end", t->vt, t->vt + t->vt_size);
  if (t->obj_size < 4 || pos + t->obj_size > r->len)
    return fb_short(r, what, "table size is invalid or runs past the end", pos, pos + t->obj_size);
  return WT_OK;
}

/* Position of field `id` (0 when absent), checked to lie inside the table and be aligned. */
static int fb_field(const wt_fb_reader *r, const wt_fb_table *t, int id, int size,
                    const char *what, uint64_t *at) {
  *at = 0;
  uint32_t slot = 4 + 2 * (uint32_t)id;
  if (slot + 2 > t->vt_size) return WT_OK;
  uint32_t off = wt_fb_u16(r->p + t->vt + slot);
  if (off == 0) return WT_OK;
  if (off < 4 || off + (uint32_t)size > t->obj_size)
    return fb_err(r, what, "field lies outside its table", t->pos);
  if ((t->pos + off) % (uint64_t)size) return fb_err(r, what, "field is misaligned", t->pos + off);
  *at = t->pos + off;
  return WT_OK;
}

int wt_fb_scalar(const wt_fb_reader *r, const wt_fb_table *t, int id, int size, const char *what,
                 uint64_t *out, int *present) {
  uint64_t at;
  WT_TRY(fb_field(r, t, id, size, what, &at));
  *present = at != 0;
  *out = 0;
  if (!at) return WT_OK;
  switch (size) {
    case 1: *out = r->p[at]; break;
    case 2: *out = wt_fb_u16(r->p + at); break;
    case 4: *out = wt_fb_u32(r->p + at); break;
    default: *out = wt_fb_u64(r->p + at); break;
  }
  return WT_OK;
}

int wt_fb_ref(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
              uint64_t *target) {
  uint64_t at;
  WT_TRY(fb_field(r, t, id, 4, what, &at));
  *target = 0;
  if (!at) return WT_OK;
  uint32_t off = wt_fb_u32(r->p + at);
  /* as flatbuffers' verifier: an offset is non-zero and below 2^31 */
  if (off == 0 || off > FB_MAX_SIZE || at + off >= r->len)
    return fb_short(r, what, "offset is zero or points past the end", at, off && off <= FB_MAX_SIZE ? at + off + 4 : 0);
  *target = at + off;
  return WT_OK;
}

int wt_fb_subtable(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
                   wt_fb_table *out, int *present) {
  uint64_t target;
  WT_TRY(wt_fb_ref(r, t, id, what, &target));
  *present = target != 0;
  if (!target) return WT_OK;
  return wt_fb_table_at(r, target, what, out);
}

static int fb_vector_at(const wt_fb_reader *r, uint64_t target, uint32_t elem_size,
                        const char *what, wt_fb_vec *out) {
  if (target % 4 || target + 4 > r->len)
    return fb_short(r, what, "vector offset out of bounds or misaligned", target, target % 4 ? 0 : target + 4);
  out->n = wt_fb_u32(r->p + target);
  out->pos = target + 4;
  uint64_t bytes = (uint64_t)out->n * elem_size;
  if (bytes > r->len - out->pos) {
    char msg[96];
    snprintf(msg, sizeof msg, "vector of %u elements (%llu bytes) runs past the end", out->n,
             (unsigned long long)bytes);
    return fb_short(r, what, msg, target, out->pos + bytes);
  }
  if (elem_size > 4 && out->pos % elem_size) return fb_err(r, what, "vector is misaligned", target);
  return WT_OK;
}

int wt_fb_vector(const wt_fb_reader *r, const wt_fb_table *t, int id, uint32_t elem_size,
                 const char *what, wt_fb_vec *out, int *present) {
  uint64_t target;
  WT_TRY(wt_fb_ref(r, t, id, what, &target));
  *present = target != 0;
  out->pos = 0;
  out->n = 0;
  if (!target) return WT_OK;
  return fb_vector_at(r, target, elem_size, what, out);
}

int wt_fb_string(const wt_fb_reader *r, const wt_fb_table *t, int id, const char *what,
                 const char **s, uint32_t *len) {
  uint64_t target;
  wt_fb_vec v = {0};
  *s = NULL;
  *len = 0;
  WT_TRY(wt_fb_ref(r, t, id, what, &target));
  if (!target) return WT_OK;
  WT_TRY(fb_vector_at(r, target, 1, what, &v));
  if (v.pos + v.n >= r->len || r->p[v.pos + v.n] != 0)
    return fb_short(r, what, "string is not NUL-terminated", target, v.pos + v.n + 1);
  if (memchr(r->p + v.pos, 0, v.n)) return fb_err(r, what, "string contains a NUL byte", target);
  *s = (const char *)(r->p + v.pos);
  *len = v.n;
  return WT_OK;
}

int wt_fb_vec_table(const wt_fb_reader *r, const wt_fb_vec *v, uint32_t i, const char *what,
                    wt_fb_table *out) {
  uint64_t at = v->pos + 4 * (uint64_t)i;  /* within bounds: the vector was checked */
  if (v->pos % 4) return fb_err(r, what, "offset vector is misaligned", v->pos);
  uint32_t off = wt_fb_u32(r->p + at);
  if (off == 0 || at + off >= r->len)
    return fb_short(r, what, "offset is zero or points past the end", at, off ? at + off + 4 : 0);
  uint64_t target = at + off;
  return wt_fb_table_at(r, target, what, out);
}

/* ---- builder ----------------------------------------------------------------------------- */

void wt_fb_builder_init(wt_fb_builder *b) {
  memset(b, 0, sizeof *b);
  b->minalign = 1;
}

void wt_fb_builder_free(wt_fb_builder *b) {
  free(b->buf);
  free(b->vtables);
  memset(b, 0, sizeof *b);
}

static int fb_reserve(wt_fb_builder *b, size_t n) {
  if (b->failed) return 0;
  if (n > FB_MAX_SIZE - b->used) {
    b->failed = 1;
    return 0;
  }
  if (b->cap - b->used >= n) return 1;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap - b->used < n) cap = cap > FB_MAX_SIZE / 2 ? (size_t)FB_MAX_SIZE + 1 : cap * 2;
  uint8_t *nb = malloc(cap);
  if (!nb) {
    b->failed = 1;
    return 0;
  }
  if (b->used) memcpy(nb + cap - b->used, b->buf + b->cap - b->used, b->used);
  free(b->buf);
  b->buf = nb;
  b->cap = cap;
  return 1;
}

static void fb_push(wt_fb_builder *b, const void *data, size_t n) {
  if (!fb_reserve(b, n)) return;
  b->used += n;
  if (n) memcpy(b->buf + b->cap - b->used, data, n);
}

static void fb_push_u32(wt_fb_builder *b, uint32_t v) { fb_push(b, &v, 4); }

/* Pads so that after `len` more bytes the buffer size is a multiple of `align`. */
static void fb_prealign(wt_fb_builder *b, size_t len, size_t align) {
  static const uint8_t zeros[16];
  if (align > b->minalign) b->minalign = align;
  size_t pad = (0 - (b->used + len)) & (align - 1);
  fb_push(b, zeros, pad);
}

static wt_fb_ref_t fb_ref(const wt_fb_builder *b) { return b->failed ? 0 : (wt_fb_ref_t)b->used; }

wt_fb_ref_t wt_fb_create_string(wt_fb_builder *b, const char *s) {
  size_t n = strlen(s);
  if (n >= FB_MAX_SIZE) {
    b->failed = 1;
    return 0;
  }
  fb_prealign(b, n + 1, 4);
  fb_push(b, s, n + 1);
  fb_push_u32(b, (uint32_t)n);
  return fb_ref(b);
}

wt_fb_ref_t wt_fb_create_vector(wt_fb_builder *b, const void *data, uint32_t n, uint32_t elem_size) {
  return wt_fb_create_vector_aligned(b, data, n, elem_size, elem_size);
}

wt_fb_ref_t wt_fb_create_vector_aligned(wt_fb_builder *b, const void *data, uint32_t n, uint32_t elem_size,
                                        uint32_t align) {
  uint64_t bytes = (uint64_t)n * elem_size;
  if (bytes >= FB_MAX_SIZE) {
    b->failed = 1;
    return 0;
  }
  fb_prealign(b, (size_t)bytes, align > 4 ? align : 4);
  fb_push(b, data, (size_t)bytes);
  fb_push_u32(b, n);
  return fb_ref(b);
}

wt_fb_ref_t wt_fb_create_ref_vector(wt_fb_builder *b, const wt_fb_ref_t *refs, uint32_t n) {
  if ((uint64_t)n * 4 >= FB_MAX_SIZE) {
    b->failed = 1;
    return 0;
  }
  fb_prealign(b, (size_t)n * 4, 4);
  for (uint32_t i = n; i-- > 0;) fb_push_u32(b, (uint32_t)(b->used + 4 - refs[i]));
  fb_push_u32(b, n);
  return fb_ref(b);
}

void wt_fb_start_table(wt_fb_builder *b) {
  memset(b->field_ref, 0, sizeof b->field_ref);
  b->n_fields = 0;
  b->table_start = (uint32_t)b->used;
}

static void fb_note_field(wt_fb_builder *b, int id) {
  b->field_ref[id] = (uint32_t)b->used;
  if (id + 1 > b->n_fields) b->n_fields = id + 1;
}

void wt_fb_add_scalar(wt_fb_builder *b, int id, const void *value, int size) {
  if (id < 0 || id >= WT_FB_MAX_FIELDS) {
    b->failed = 1;
    return;
  }
  fb_prealign(b, (size_t)size, (size_t)size);
  fb_push(b, value, (size_t)size);
  if (!b->failed) fb_note_field(b, id);
}

void wt_fb_add_ref(wt_fb_builder *b, int id, wt_fb_ref_t ref) {
  if (id < 0 || id >= WT_FB_MAX_FIELDS) {
    b->failed = 1;
    return;
  }
  fb_prealign(b, 4, 4);
  fb_push_u32(b, (uint32_t)(b->used + 4 - ref));
  if (!b->failed) fb_note_field(b, id);
}

wt_fb_ref_t wt_fb_end_table(wt_fb_builder *b) {
  fb_prealign(b, 4, 4);
  fb_push_u32(b, 0);  /* soffset to the vtable, patched below */
  if (b->failed) return 0;
  uint32_t obj_ref = (uint32_t)b->used;
  uint32_t obj_size = obj_ref - b->table_start;
  if (obj_size > 0xffff) {
    b->failed = 1;
    return 0;
  }
  uint16_t vt[2 + WT_FB_MAX_FIELDS];
  size_t vt_size = 4 + 2 * (size_t)b->n_fields;
  vt[0] = (uint16_t)vt_size;
  vt[1] = (uint16_t)obj_size;
  for (int i = 0; i < b->n_fields; i++)
    vt[2 + i] = (uint16_t)(b->field_ref[i] ? obj_ref - b->field_ref[i] : 0);
  uint32_t vt_ref = 0;
  for (size_t k = 0; k < b->n_vtables && !vt_ref; k++) {
    const uint8_t *old = b->buf + b->cap - b->vtables[k];
    if (wt_fb_u16(old) == vt_size && memcmp(old, vt, vt_size) == 0) vt_ref = b->vtables[k];
  }
  if (!vt_ref) {
    fb_push(b, vt, vt_size);
    if (b->failed) return 0;
    vt_ref = (uint32_t)b->used;
    if (b->n_vtables == b->cap_vtables) {
      size_t nc = b->cap_vtables ? 2 * b->cap_vtables : 16;
      uint32_t *nv = realloc(b->vtables, nc * sizeof *nv);
      if (!nv) {
        b->failed = 1;
        return 0;
      }
      b->vtables = nv;
      b->cap_vtables = nc;
    }
    b->vtables[b->n_vtables++] = vt_ref;
  }
  int32_t soff = (int32_t)((int64_t)vt_ref - (int64_t)obj_ref);
  memcpy(b->buf + b->cap - obj_ref, &soff, 4);
  return obj_ref;
}

int wt_fb_finish(wt_fb_builder *b, wt_fb_ref_t root, const char *ident, uint8_t **out,
                 size_t *len) {
  *out = NULL;
  *len = 0;
  fb_prealign(b, 8, b->minalign > 4 ? b->minalign : 4);
  fb_push(b, ident, 4);
  fb_push_u32(b, (uint32_t)(b->used + 4 - root));
  if (b->failed)
    return wt_errorf(WT_ERR_NO_MEMORY, "flatbuffer: out of memory or over the 2 GB limit");
  uint8_t *o = malloc(b->used);
  if (!o) return wt_errorf(WT_ERR_NO_MEMORY, "flatbuffer: out of memory (%zu bytes)", b->used);
  memcpy(o, b->buf + b->cap - b->used, b->used);
  *out = o;
  *len = b->used;
  return WT_OK;
}
