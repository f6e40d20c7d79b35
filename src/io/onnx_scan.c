/* The streamed scanner of a model file (see onnx_scan.h): a state machine over the bytes of
 * ModelProto -> graph (field 7) -> initializer (field 5), fed in pieces of any size. Every field
 * is copied to the skeleton as it arrives except the data of large initializers, which is
 * dropped; the graph's and each initializer's length prefix is written when the message closes
 * (its content may have shrunk), so the skeleton is valid protobuf with the same fields in the
 * same order. Only the field headers are held across pieces (a varint is at most 10 bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_scan.h"

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5 };
enum { T_DATA_TYPE = 2, T_FLOAT_DATA = 4, T_NAME = 8, T_RAW_DATA = 9, T_EXTERNAL = 13, T_LOCATION = 14 };
enum { ST_TAG, ST_LEN, ST_VARINT, ST_COPY, ST_SKIP };
/* What a length prefix starts: a field copied as it is, the graph, an initializer, its name, its data. */
enum { K_COPY, K_GRAPH, K_TENSOR, K_NAME, K_DATA };
/* A field copied through may not pass this (protobuf's own limit for a message). */
#define COPY_MAX ((uint64_t)1 << 31)

typedef struct level {
  uint64_t end;                 /* file offset where the message ends */
  size_t at;                    /* skeleton offset where its content starts */
} level;

struct wt_scan {
  char *location;
  uint64_t size, inside_min;
  uint64_t pos;                 /* file offset of the next byte */
  uint8_t *out;                 /* the skeleton */
  size_t len, cap;
  level lv[3];                  /* [1] the graph, [2] an initializer */
  int depth;
  int state, kind;
  uint8_t vb[10];               /* the varint being read */
  int vn;
  uint64_t vv;
  uint8_t tb[10];               /* the current field's tag */
  int tn;
  uint64_t remain;              /* ST_COPY / ST_SKIP */
  /* the initializer being read */
  int32_t dtype;
  char *name;                   /* NULL past 4 KiB (not needed for anything but messages) */
  size_t name_len;
  int has_ref;
  wt_inside_ref *refs;
  int n_refs;
  int failed;
  uint32_t hash;
};

uint32_t wt_fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 0x811c9dc5u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x01000193u;
  return h;
}

int wt_scan_new(const char *location, uint64_t size, uint64_t inside_min, wt_scan **out) {
  *out = NULL;
  wt_scan *s = calloc(1, sizeof *s);
  if (!s || !(s->location = wt_strdup(location))) {
    free(s);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  s->size = size;
  s->inside_min = inside_min ? inside_min : 1;
  s->lv[0].end = UINT64_MAX;
  *out = s;
  return WT_OK;
}

void wt_inside_refs_free(wt_inside_ref *refs, int n) {
  for (int i = 0; refs && i < n; i++) free(refs[i].tensor);
  free(refs);
}

void wt_scan_free(wt_scan *s) {
  if (!s) return;
  free(s->location);
  free(s->out);
  free(s->name);
  wt_inside_refs_free(s->refs, s->n_refs);
  free(s);
}

/* Fails the scan (it stays failed); the message names the byte. */
#define FAIL(s, code, ...) ((s)->failed = 1, wt_errorf((code), __VA_ARGS__))

static int reserve(wt_scan *s, size_t n) {
  if (s->len + n <= s->cap) return WT_OK;
  size_t cap = s->cap ? s->cap : 4096;
  while (cap < s->len + n) cap *= 2;
  uint8_t *p = realloc(s->out, cap);
  if (!p) return FAIL(s, WT_ERR_NO_MEMORY, "out of memory (a model skeleton of %zu bytes)", s->len + n);
  s->out = p;
  s->cap = cap;
  return WT_OK;
}

static int emit(wt_scan *s, const void *p, size_t n) {
  WT_TRY(reserve(s, n));
  memcpy(s->out + s->len, p, n);
  s->len += n;
  return WT_OK;
}

static int varint_bytes(uint64_t v, uint8_t *b) {
  int n = 0;
  for (; v >= 0x80; v >>= 7) b[n++] = (uint8_t)(v | 0x80);
  b[n++] = (uint8_t)v;
  return n;
}

static int emit_varint(wt_scan *s, uint64_t v) {
  uint8_t b[10];
  return emit(s, b, (size_t)varint_bytes(v, b));
}

/* A length-delimited field: tag, length, bytes. */
static int emit_field(wt_scan *s, uint32_t id, const void *p, size_t n) {
  WT_TRY(emit_varint(s, (uint64_t)id << 3 | 2));
  WT_TRY(emit_varint(s, n));
  return emit(s, p, n);
}

/* A StringStringEntryProto field (external_data, metadata_props). */
static int emit_entry(wt_scan *s, uint32_t id, const char *key, const char *value) {
  size_t kn = strlen(key), vn = strlen(value);
  uint8_t b[10];
  size_t n = 2 + (size_t)varint_bytes(kn, b) + kn + (size_t)varint_bytes(vn, b) + vn;
  WT_TRY(emit_varint(s, (uint64_t)id << 3 | 2));
  WT_TRY(emit_varint(s, n));
  WT_TRY(emit_field(s, 1, key, kn));
  return emit_field(s, 2, value, vn);
}

/* Writes the closing message's length prefix at its start. */
static int close_level(wt_scan *s) {
  if (s->depth == 2 && s->has_ref) {
    const wt_inside_ref *r = &s->refs[s->n_refs - 1];
    char num[24];
    WT_TRY(emit_entry(s, T_EXTERNAL, "location", s->location));
    snprintf(num, sizeof num, "%llu", (unsigned long long)r->offset);
    WT_TRY(emit_entry(s, T_EXTERNAL, "offset", num));
    snprintf(num, sizeof num, "%llu", (unsigned long long)r->length);
    WT_TRY(emit_entry(s, T_EXTERNAL, "length", num));
    WT_TRY(emit_varint(s, (uint64_t)T_LOCATION << 3));
    WT_TRY(emit_varint(s, 1));
  }
  size_t at = s->lv[s->depth].at, n = s->len - at;
  uint8_t b[10];
  int k = varint_bytes(n, b);
  WT_TRY(reserve(s, (size_t)k));
  memmove(s->out + at + k, s->out + at, n);
  memcpy(s->out + at, b, (size_t)k);
  s->len += (size_t)k;
  s->depth--;
  return WT_OK;
}

/* After a field: back to reading tags, closing the messages that end here. */
static int field_done(wt_scan *s) {
  s->state = ST_TAG;
  s->kind = K_COPY;
  s->vn = 0;
  s->vv = 0;
  while (s->depth > 0 && s->pos >= s->lv[s->depth].end) {
    if (s->pos > s->lv[s->depth].end)
      return FAIL(s, WT_ERR_PARSE, "a message overruns its length at byte %llu", (unsigned long long)s->pos);
    WT_TRY(close_level(s));
  }
  return WT_OK;
}

static int start_varint(wt_scan *s, int state) {
  s->state = state;
  s->vn = 0;
  s->vv = 0;
  return WT_OK;
}

static int copy(wt_scan *s, uint64_t n) {
  if (n > COPY_MAX) return FAIL(s, WT_ERR_PARSE, "a field of %llu bytes at byte %llu", (unsigned long long)n, (unsigned long long)s->pos);
  s->state = ST_COPY;
  s->remain = n;
  return n ? WT_OK : field_done(s);
}

static int on_tag(wt_scan *s) {
  uint64_t tag = s->vv;
  memcpy(s->tb, s->vb, (size_t)s->vn);
  s->tn = s->vn;
  if (tag >= ((uint64_t)1 << 32) || (tag >> 3) == 0)
    return FAIL(s, WT_ERR_PARSE, "field number 0 at byte %llu", (unsigned long long)s->pos);
  uint32_t id = (uint32_t)(tag >> 3);
  int wire = (int)(tag & 7);
  if (s->depth == 0 && id == MODEL_GRAPH && wire == 2) return s->kind = K_GRAPH, start_varint(s, ST_LEN);
  if (s->depth == 1 && id == GRAPH_INITIALIZER && wire == 2) return s->kind = K_TENSOR, start_varint(s, ST_LEN);
  if (s->depth == 2) {
    const char *name = s->name ? s->name : "";
    if (id == T_NAME && wire == 2) return s->kind = K_NAME, start_varint(s, ST_LEN);
    if (id == T_LOCATION && wire == 0 && s->has_ref)
      return FAIL(s, WT_ERR_PARSE, "tensor '%s' has data inside and a data_location", name);
    if (id == T_EXTERNAL && s->has_ref)
      return FAIL(s, WT_ERR_PARSE, "tensor '%s' has data inside and external_data", name);
    if (wire == 2 && !s->has_ref && (id == T_RAW_DATA || (id == T_FLOAT_DATA && s->dtype == WT_FLOAT)))
      return s->kind = K_DATA, start_varint(s, ST_LEN);
  }
  switch (wire) {
    case 0: WT_TRY(emit(s, s->tb, (size_t)s->tn)); return start_varint(s, ST_VARINT);
    case 1: WT_TRY(emit(s, s->tb, (size_t)s->tn)); return copy(s, 8);
    case 5: WT_TRY(emit(s, s->tb, (size_t)s->tn)); return copy(s, 4);
    case 2: s->kind = K_COPY; return start_varint(s, ST_LEN);
    default: return FAIL(s, WT_ERR_PARSE, "wire type %d at byte %llu", wire, (unsigned long long)s->pos);
  }
}

static int on_len(wt_scan *s) {
  uint64_t n = s->vv, end = s->lv[s->depth].end;
  if (n > end - s->pos)
    return FAIL(s, WT_ERR_PARSE, "a field of %llu bytes at byte %llu runs past its message", (unsigned long long)n, (unsigned long long)s->pos);
  const char *name = s->name ? s->name : "";
  if (s->kind == K_DATA && n >= s->inside_min) {
    if (s->size != WT_SCAN_SIZE_UNKNOWN && n > s->size - s->pos)
      return FAIL(s, WT_ERR_IO, "tensor '%s' has %llu bytes at offset %llu, past the file's end (%llu bytes): the file is truncated (copy or download it again)",
                  name, (unsigned long long)n, (unsigned long long)s->pos, (unsigned long long)s->size);
    wt_inside_ref *grown = realloc(s->refs, sizeof *grown * (size_t)(s->n_refs + 1));
    if (!grown) return FAIL(s, WT_ERR_NO_MEMORY, "out of memory");
    s->refs = grown;
    grown[s->n_refs] = (wt_inside_ref){.tensor = wt_strdup(name), .offset = s->pos, .length = n, .dtype = s->dtype};
    if (!grown[s->n_refs++].tensor) return FAIL(s, WT_ERR_NO_MEMORY, "out of memory");
    s->has_ref = 1;
    s->state = ST_SKIP;
    s->remain = n;
    return WT_OK;
  }
  WT_TRY(emit(s, s->tb, (size_t)s->tn));
  /* a message running past a cut file is found inside it: at the weights, a truncated file */
  if (s->kind == K_GRAPH || s->kind == K_TENSOR) {
    if (s->kind == K_TENSOR) {
      s->dtype = 0;
      s->has_ref = 0;
      free(s->name);
      s->name = NULL;
    }
    s->lv[++s->depth] = (level){.end = s->pos + n, .at = s->len};
    return field_done(s);
  }
  if (s->size != WT_SCAN_SIZE_UNKNOWN && n > s->size - s->pos)
    return FAIL(s, WT_ERR_PARSE, "a field of %llu bytes at byte %llu runs past the end (%llu bytes)",
                (unsigned long long)n, (unsigned long long)s->pos, (unsigned long long)s->size);
  WT_TRY(emit(s, s->vb, (size_t)s->vn));
  if (s->kind == K_NAME) {
    free(s->name);
    s->name = NULL;
    s->name_len = 0;
    if (n < 4096 && !(s->name = calloc(1, (size_t)n + 1))) return FAIL(s, WT_ERR_NO_MEMORY, "out of memory");
  }
  return copy(s, n);
}

int wt_scan_push(wt_scan *s, const uint8_t *p, size_t n) {
  if (s->failed) return wt_errorf(WT_ERR_INVALID_ARG, "the model scan failed already");
  for (size_t i = 0; i < n;) {
    switch (s->state) {
      case ST_TAG:
      case ST_LEN:
      case ST_VARINT: {
        if (s->vn == 10) return FAIL(s, WT_ERR_PARSE, "a varint longer than 10 bytes at byte %llu", (unsigned long long)s->pos);
        uint8_t b = p[i++];
        s->pos++;
        s->vb[s->vn] = b;
        if (s->vn < 10 && 7 * s->vn < 64) s->vv |= (uint64_t)(b & 0x7f) << (7 * s->vn);
        s->vn++;
        if (s->state == ST_VARINT) WT_TRY(emit(s, &b, 1));
        if (b & 0x80) break;
        if (s->state == ST_TAG) WT_TRY(on_tag(s));
        else if (s->state == ST_LEN) WT_TRY(on_len(s));
        else {
          if (s->depth == 2 && s->tn == 1 && s->tb[0] == T_DATA_TYPE << 3) s->dtype = (int32_t)s->vv;
          WT_TRY(field_done(s));
        }
        break;
      }
      case ST_COPY: {
        size_t k = (size_t)(s->remain < n - i ? s->remain : n - i);
        WT_TRY(emit(s, p + i, k));
        if (s->kind == K_NAME && s->name) {
          memcpy(s->name + s->name_len, p + i, k);
          s->name_len += k;
        }
        i += k;
        s->pos += k;
        s->remain -= k;
        if (!s->remain) WT_TRY(field_done(s));
        break;
      }
      case ST_SKIP: {
        size_t k = (size_t)(s->remain < n - i ? s->remain : n - i);
        i += k;
        WT_TRY(wt_scan_pass(s, k));
        break;
      }
    }
  }
  return WT_OK;
}

uint64_t wt_scan_skip(const wt_scan *s) { return !s->failed && s->state == ST_SKIP ? s->remain : 0; }

int wt_scan_pass(wt_scan *s, uint64_t n) {
  if (n > wt_scan_skip(s))
    return wt_errorf(WT_ERR_INVALID_ARG, "passing %llu bytes of the model where %llu are to be skipped", (unsigned long long)n, (unsigned long long)wt_scan_skip(s));
  s->pos += n;
  s->remain -= n;
  return s->state == ST_SKIP && !s->remain ? field_done(s) : WT_OK;
}

uint64_t wt_scan_offset(const wt_scan *s) { return s->pos; }
const char *wt_scan_location(const wt_scan *s) { return s->location; }
int wt_scan_inside_count(const wt_scan *s) { return s->n_refs; }
const wt_inside_ref *wt_scan_inside(const wt_scan *s, int i) { return i >= 0 && i < s->n_refs ? &s->refs[i] : NULL; }

int wt_scan_finish(wt_scan *s) {
  if (s->failed) return wt_errorf(WT_ERR_INVALID_ARG, "the model scan failed already");
  if (s->state != ST_TAG || s->vn || s->depth)
    return FAIL(s, WT_ERR_PARSE, "the model ends at byte %llu, inside a %s", (unsigned long long)s->pos,
                s->depth ? "message" : "field");
  s->hash = wt_fnv1a(s->out, s->len);
  return WT_OK;
}

uint32_t wt_scan_hash(const wt_scan *s) { return s->hash; }

/* Moves the skeleton and the ranges out of a finished scan. */
int wt_scan_take(wt_scan *s, uint8_t **bytes, size_t *len, wt_inside_ref **refs, int *n) {
  if (s->failed || s->state != ST_TAG || s->depth) return wt_errorf(WT_ERR_INVALID_ARG, "the model scan is not finished");
  *bytes = s->out ? s->out : calloc(1, 1);
  if (!*bytes) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  *len = s->len;
  *refs = s->refs;
  *n = s->n_refs;
  s->out = NULL;
  s->len = s->cap = 0;
  s->refs = NULL;
  s->n_refs = 0;
  s->failed = 1;
  return WT_OK;
}
