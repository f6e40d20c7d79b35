/* Checkpoint codec tests: ONNX Runtime's own MNIST checkpoint (read, write back, re-read),
 * round trips with optimizer state, properties and nominal tensors, and hostile input
 * (truncation, byte flips, bad identifier/version/sizes, shared objects) under ASan/UBSan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "check.h"
#include "io/checkpoint.h"
#include "io/flatbuf.h"
#include "io/onnx_io.h"

static size_t tensor_bytes(const wt_tensor *t) {
  size_t n = wt_dtype_size(t->dtype);
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

static const wt_const_tensor *find_tensor(const wt_const_tensor *ts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(ts[i].name, name) == 0) return &ts[i];
  return NULL;
}

/* Same names, dtypes, shapes and bytes (in any order). */
static int same_tensors(const wt_const_tensor *a, int na, const wt_const_tensor *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++) {
    const wt_const_tensor *o = find_tensor(b, nb, a[i].name);
    if (!o || o->t.dtype != a[i].t.dtype || o->t.rank != a[i].t.rank) return 0;
    if (memcmp(o->t.dims, a[i].t.dims, sizeof(int64_t) * (size_t)a[i].t.rank)) return 0;
    size_t bytes = tensor_bytes(&a[i].t);
    if ((a[i].t.data == NULL) != (o->t.data == NULL)) return 0;
    if (bytes && a[i].t.data && memcmp(a[i].t.data, o->t.data, bytes)) return 0;
  }
  return 1;
}

static int sorted_by_name(const wt_const_tensor *ts, int n) {
  for (int i = 1; i < n; i++)
    if (strcmp(ts[i - 1].name, ts[i].name) >= 0) return 0;
  return 1;
}

static int expect_error(const uint8_t *bytes, size_t len, int code, const char *needle) {
  wt_checkpoint *c = NULL;
  wt_error_clear();
  int rc = wt_checkpoint_read(bytes, len, &c);
  const char *msg = wt_error_message();
  if (rc == WT_OK || c != NULL || (code && rc != code) || (strncmp(msg, "checkpoint", 10) != 0 &&
                                                              strncmp(msg, "truncated or corrupt checkpoint: ", 33) != 0) ||
      (needle && !strstr(msg, needle))) {
    fprintf(stderr, "  expected error %d with '%s', got %d: %s\n", code, needle ? needle : "",
            rc, msg);
    wt_checkpoint_free(c);
    return 0;
  }
  return 1;
}

static size_t find_bytes(const uint8_t *hay, size_t n, const void *needle, size_t m) {
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(hay + i, needle, m) == 0) return i;
  return (size_t)-1;
}

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Position of the root table's version field (the test's own little walk). */
static size_t version_pos(const uint8_t *b) {
  uint32_t root = wt_fb_u32(b);
  uint32_t vt = (uint32_t)((int64_t)root - (int32_t)wt_fb_u32(b + root));
  return root + wt_fb_u16(b + vt + 4);
}

static void test_ort_checkpoint(uint8_t **ort_bytes, size_t *ort_len) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  CHECK_OK(wt_read_file(WT_SOURCE_DIR "/tests/data/ort-mnist/checkpoint", &bytes, &len));
  if (!bytes) return;
  *ort_bytes = bytes;
  *ort_len = len;
  CHECK(len == 1590352);
  wt_checkpoint *c = NULL;
  CHECK_OK(wt_checkpoint_read(bytes, len, &c));
  if (!c) return;
  CHECK(c->version == 1);
  CHECK(!c->is_nominal && !c->has_optimizer && c->n_frozen == 0);
  CHECK(c->n_ints == 0 && c->n_floats == 0 && c->n_strings == 0);
  CHECK(c->n_trainable == 4);
  /* ONNX Runtime wrote this file in the model's parameter order, not sorted by name */
  static const char *names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
  static const int64_t shapes[4][2] = {{500, 784}, {500, 0}, {10, 500}, {10, 0}};
  size_t total = 0;
  for (int i = 0; i < 4 && i < c->n_trainable; i++) {
    const wt_const_tensor *t = &c->trainable[i];
    CHECK(strcmp(t->name, names[i]) == 0);
    CHECK(t->t.dtype == WT_FLOAT);
    CHECK(t->t.rank == (shapes[i][1] ? 2 : 1));
    CHECK(t->t.dims[0] == shapes[i][0]);
    if (shapes[i][1]) CHECK(t->t.dims[1] == shapes[i][1]);
    CHECK(t->t.data != NULL);
    total += tensor_bytes(&t->t) / 4;
  }
  CHECK(total == 397510);

  /* Write back (version 2), read again: bit-identical tensors; write again: same bytes. */
  uint8_t *w1 = NULL, *w2 = NULL;
  size_t l1 = 0, l2 = 0;
  CHECK_OK(wt_checkpoint_write(c, 1, &w1, &l1));
  wt_checkpoint *c2 = NULL;
  if (w1) {
    CHECK(l1 % 8 == 0 && memcmp(w1 + 4, "ODTC", 4) == 0);
    CHECK(wt_fb_u32(w1 + version_pos(w1)) == 2);
    CHECK_OK(wt_checkpoint_read(w1, l1, &c2));
  }
  if (c2) {
    CHECK(c2->version == 2 && !c2->is_nominal && !c2->has_optimizer);
    CHECK(same_tensors(c->trainable, c->n_trainable, c2->trainable, c2->n_trainable));
    CHECK(sorted_by_name(c2->trainable, c2->n_trainable));
    CHECK(c2->n_frozen == 0);
    CHECK_OK(wt_checkpoint_write(c2, 1, &w2, &l2));
    CHECK(w2 && l1 == l2 && memcmp(w1, w2, l1) == 0);
    printf("ORT checkpoint: %zu bytes read, %zu bytes written\n", len, l1);
  }
  /* Version 1 -> 2 is the only change ONNX Runtime 1.19 needs; the reader takes both. */
  bytes[version_pos(bytes)] = 2;
  wt_checkpoint *c3 = NULL;
  CHECK_OK(wt_checkpoint_read(bytes, len, &c3));
  CHECK(c3 && c3->version == 2 && c3->n_trainable == 4);
  bytes[version_pos(bytes)] = 1;
  wt_checkpoint_free(c3);
  wt_checkpoint_free(c2);
  wt_checkpoint_free(c);
  free(w1);
  free(w2);
}

/* ---- a synthetic checkpoint ----------------------------------------------------------------- */

static char *dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

static void make_tensor(wt_const_tensor *t, const char *name, int dtype, int rank,
                        const int64_t *dims, uint32_t seed, int with_data) {
  memset(t, 0, sizeof *t);
  t->name = dup(name);
  t->t.dtype = dtype;
  t->t.rank = rank;
  for (int i = 0; i < rank; i++) t->t.dims[i] = dims[i];
  size_t bytes = tensor_bytes(&t->t);
  if (!with_data || bytes == 0) return;
  uint8_t *d = malloc(bytes);
  for (size_t i = 0; i < bytes; i++) {
    seed = seed * 1664525u + 1013904223u;
    d[i] = (uint8_t)(seed >> 24);
  }
  if (dtype == WT_BOOL)
    for (size_t i = 0; i < bytes; i++) d[i] &= 1;
  t->t.data = d;
}

static wt_checkpoint *make_checkpoint(int nominal, int optimizer) {
  wt_checkpoint *c = calloc(1, sizeof *c);
  c->version = 2;
  c->is_nominal = nominal;
  c->n_trainable = 3;
  c->trainable = calloc(3, sizeof *c->trainable);
  static const int64_t w[2] = {3, 5}, b[1] = {3}, f[1] = {4};
  make_tensor(&c->trainable[0], "layer.weight", WT_FLOAT, 2, w, 1, !nominal);
  make_tensor(&c->trainable[1], "fc.weight", WT_FLOAT, 1, f, 2, !nominal);
  make_tensor(&c->trainable[2], "layer.bias", WT_FLOAT, 1, b, 3, !nominal);
  if (!nominal) {
    float *fd = c->trainable[1].t.data;
    fd[0] = 1.5f, fd[1] = 2.5f, fd[2] = 3.5f, fd[3] = 4.5f;
  }
  c->n_frozen = 4;
  c->frozen = calloc(4, sizeof *c->frozen);
  static const int64_t e[2] = {2, 0}, s[1] = {7};
  make_tensor(&c->frozen[0], "steps", WT_INT64, 0, NULL, 4, !nominal);
  make_tensor(&c->frozen[1], "mask", WT_BOOL, 1, s, 5, !nominal);
  make_tensor(&c->frozen[2], "ids", WT_INT32, 1, s, 6, !nominal);
  make_tensor(&c->frozen[3], "empty", WT_FLOAT, 2, e, 7, !nominal);
  if (optimizer) {
    c->has_optimizer = 1;
    c->group_name = dup("group0");
    c->step = 12345678901LL;
    c->initial_lr = 1e-3f;
    c->n_param_states = 3;
    c->param_states = calloc(3, sizeof *c->param_states);
    for (int i = 0; i < 3; i++) {
      wt_ckpt_param_state *ps = &c->param_states[i];
      const wt_const_tensor *p = &c->trainable[i];
      ps->param_name = dup(p->name);
      ps->n_momentums = 2;
      ps->momentums = calloc(2, sizeof *ps->momentums);
      make_tensor(&ps->momentums[1], "momentum1", WT_FLOAT, p->t.rank, p->t.dims, 10 + i, 1);
      make_tensor(&ps->momentums[0], "momentum0", WT_FLOAT, p->t.rank, p->t.dims, 20 + i, 1);
    }
  }
  c->n_ints = 3;
  c->ints = calloc(3, sizeof *c->ints);
  c->ints[0] = (wt_ckpt_int_prop){dup("epoch"), 3};
  c->ints[1] = (wt_ckpt_int_prop){dup("zero"), 0};
  c->ints[2] = (wt_ckpt_int_prop){dup("neg"), INT64_MIN};
  c->n_floats = 2;
  c->floats = calloc(2, sizeof *c->floats);
  c->floats[0] = (wt_ckpt_float_prop){dup("best_loss"), 0.125f};
  c->floats[1] = (wt_ckpt_float_prop){dup("minus"), -3.75e-20f};
  c->n_strings = 2;
  c->strings = calloc(2, sizeof *c->strings);
  c->strings[0] = (wt_ckpt_string_prop){dup("dataset"), dup("mnist/train ü")};
  c->strings[1] = (wt_ckpt_string_prop){dup("empty"), dup("")};
  return c;
}

static int same_props(const wt_checkpoint *a, const wt_checkpoint *b) {
  if (a->n_ints != b->n_ints || a->n_floats != b->n_floats || a->n_strings != b->n_strings)
    return 0;
  for (int i = 0; i < a->n_ints; i++)
    if (strcmp(a->ints[i].name, b->ints[i].name) || a->ints[i].value != b->ints[i].value) return 0;
  for (int i = 0; i < a->n_floats; i++)
    if (strcmp(a->floats[i].name, b->floats[i].name) ||
        memcmp(&a->floats[i].value, &b->floats[i].value, 4))
      return 0;
  for (int i = 0; i < a->n_strings; i++)
    if (strcmp(a->strings[i].name, b->strings[i].name) ||
        strcmp(a->strings[i].value, b->strings[i].value))
      return 0;
  return 1;
}

static int same_optimizer(const wt_checkpoint *a, const wt_checkpoint *b) {
  if (a->has_optimizer != b->has_optimizer) return 0;
  if (!a->has_optimizer) return 1;
  if (strcmp(a->group_name, b->group_name) || a->step != b->step ||
      memcmp(&a->initial_lr, &b->initial_lr, 4) || a->n_param_states != b->n_param_states)
    return 0;
  for (int i = 0; i < a->n_param_states; i++) {
    const wt_ckpt_param_state *pa = &a->param_states[i], *pb = NULL;
    for (int j = 0; j < b->n_param_states; j++)
      if (strcmp(b->param_states[j].param_name, pa->param_name) == 0) pb = &b->param_states[j];
    if (!pb || !same_tensors(pa->momentums, pa->n_momentums, pb->momentums, pb->n_momentums))
      return 0;
    if (!sorted_by_name(pb->momentums, pb->n_momentums)) return 0;
  }
  return 1;
}

static void round_trip(const wt_checkpoint *c, int include_opt, uint8_t **bytes, size_t *len) {
  uint8_t *w1 = NULL, *w2 = NULL;
  size_t l1 = 0, l2 = 0;
  wt_checkpoint *r = NULL;
  CHECK_OK(wt_checkpoint_write(c, include_opt, &w1, &l1));
  if (w1) CHECK_OK(wt_checkpoint_read(w1, l1, &r));
  if (r) {
    CHECK(r->version == 2 && r->is_nominal == c->is_nominal);
    CHECK(same_tensors(c->trainable, c->n_trainable, r->trainable, r->n_trainable));
    CHECK(same_tensors(c->frozen, c->n_frozen, r->frozen, r->n_frozen));
    CHECK(sorted_by_name(r->trainable, r->n_trainable) && sorted_by_name(r->frozen, r->n_frozen));
    CHECK(same_props(c, r));
    if (include_opt) CHECK(same_optimizer(c, r));
    else CHECK(!r->has_optimizer && r->n_param_states == 0);
    CHECK_OK(wt_checkpoint_write(r, include_opt, &w2, &l2));
    CHECK(w2 && l1 == l2 && memcmp(w1, w2, l1) == 0);
  }
  wt_checkpoint_free(r);
  free(w2);
  if (bytes) {
    *bytes = w1;
    *len = l1;
  } else {
    free(w1);
  }
}

/* ---- hostile input ------------------------------------------------------------------------- */

static void test_corruption(const uint8_t *good, size_t len, const char *label, size_t step,
                            int n_flips) {
  uint8_t *b = malloc(len);
  int bad = 0, ok_flips = 0;
  for (size_t cut = 0; cut < len; cut += cut < 512 ? 1 : step) {
    memcpy(b, good, cut);
    wt_checkpoint *c = NULL;
    int rc = wt_checkpoint_read(cut ? b : NULL, cut, &c);
    if (rc == WT_OK || c) bad++;
    wt_checkpoint_free(c);
  }
  uint32_t seed = 12345;
  for (int k = 0; k < n_flips; k++) {
    memcpy(b, good, len);
    int flips = 1 + k % 3;
    for (int f = 0; f < flips; f++) {
      seed = seed * 1103515245u + 12345u;
      size_t pos = (seed >> 8) % len;  /* big files: mostly the head and the tail (names) */
      if (len > 8192 && k % 3 == 0) pos = (seed >> 8) % 256;
      if (len > 8192 && k % 3 == 1) pos = len - 1 - (seed >> 8) % 256;
      seed = seed * 1103515245u + 12345u;
      b[pos] ^= (uint8_t)(1 + (seed >> 24) % 255);
    }
    wt_checkpoint *c = NULL;
    int rc = wt_checkpoint_read(b, len, &c);
    if (rc == WT_OK) {
      ok_flips++;
      CHECK(c != NULL);
      uint8_t *w = NULL;
      size_t wl = 0;
      CHECK_OK(wt_checkpoint_write(c, 1, &w, &wl));  /* whatever it read, it can write */
      free(w);
    } else {
      CHECK(c == NULL && wt_error_message()[0] != 0);
    }
    wt_checkpoint_free(c);
  }
  CHECK(bad == 0);
  printf("%s: truncations rejected, %d of %d byte-flip variants still parse\n", label, ok_flips,
         n_flips);
  free(b);
}

static void test_errors(const uint8_t *good, size_t len) {
  uint8_t *b = malloc(len);
  CHECK(expect_error(NULL, 0, WT_ERR_PARSE, "too short"));
  memcpy(b, good, len);
  memcpy(b + 4, "ORTM", 4);
  CHECK(expect_error(b, len, WT_ERR_PARSE, "file identifier is 'ORTM', expected 'ODTC'"));
  memcpy(b, good, len);
  put_u32(b + version_pos(b), 3);
  CHECK(expect_error(b, len, WT_ERR_UNSUPPORTED, "version 3 is not supported"));
  put_u32(b + version_pos(b), 0);
  CHECK(expect_error(b, len, WT_ERR_UNSUPPORTED, "version 0"));

  /* raw_data of fc.weight (float [4] = 1.5, 2.5, 3.5, 4.5) shortened to 12 bytes */
  static const float vals[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  memcpy(b, good, len);
  size_t at = find_bytes(b, len, vals, sizeof vals);
  CHECK(at != (size_t)-1 && at >= 4);
  if (at != (size_t)-1) {
    CHECK(wt_fb_u32(b + at - 4) == 16);
    put_u32(b + at - 4, 12);
    CHECK(expect_error(b, len, WT_ERR_PARSE,
                       "tensor 'fc.weight': raw_data has 12 bytes; float [4] needs 16"));
    put_u32(b + at - 4, 0xfffffff0u);
    CHECK(expect_error(b, len, WT_ERR_PARSE, "runs past the end"));
  }
  /* dims of layer.weight: [3,5] -> [3,-5], [3,2^40], [2^33,2^33] */
  static const uint8_t dims35[20] = {2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0};
  memcpy(b, good, len);
  at = find_bytes(b, len, dims35, sizeof dims35);
  CHECK(at != (size_t)-1);
  if (at != (size_t)-1) {
    int64_t d = -5;
    memcpy(b + at + 12, &d, 8);
    CHECK(expect_error(b, len, WT_ERR_PARSE, "dimension 1 is negative (-5)"));
    d = (int64_t)1 << 33;
    memcpy(b + at + 4, &d, 8);
    memcpy(b + at + 12, &d, 8);
    CHECK(expect_error(b, len, WT_ERR_PARSE, "more than 2^32 elements"));
    d = 4;
    memcpy(b + at + 4, &d, 8);
    d = 5;
    memcpy(b + at + 12, &d, 8);
    CHECK(expect_error(b, len, WT_ERR_PARSE, "raw_data has 60 bytes; float [4,5] needs 80"));
  }
  free(b);
}

/* Hand-built flatbuffers for what the writer never produces. */
static wt_fb_ref_t fb_tensor(wt_fb_builder *b, const char *name, int32_t dtype, int64_t ext) {
  int64_t dims[1] = {2};
  float data[2] = {1, 2};
  wt_fb_ref_t raw = wt_fb_create_vector(b, data, 8, 1);
  wt_fb_ref_t d = wt_fb_create_vector(b, dims, 1, 8);
  wt_fb_ref_t n = wt_fb_create_string(b, name);
  wt_fb_start_table(b);
  if (ext != -1) wt_fb_add_scalar(b, 6, &ext, 8);
  wt_fb_add_ref(b, 4, raw);
  wt_fb_add_ref(b, 2, d);
  wt_fb_add_ref(b, 0, n);
  wt_fb_add_scalar(b, 3, &dtype, 4);
  return wt_fb_end_table(b);
}

static void fb_checkpoint(wt_fb_builder *b, wt_fb_ref_t tensors, int32_t version, uint8_t **out,
                          size_t *len) {
  wt_fb_ref_t empty = wt_fb_create_ref_vector(b, NULL, 0);
  wt_fb_start_table(b);
  wt_fb_add_ref(b, 0, tensors);
  wt_fb_add_ref(b, 1, empty);
  wt_fb_ref_t ms = wt_fb_end_table(b);
  wt_fb_start_table(b);
  wt_fb_add_ref(b, 1, ms);
  wt_fb_add_scalar(b, 0, &version, 4);
  wt_fb_ref_t root = wt_fb_end_table(b);
  CHECK_OK(wt_fb_finish(b, root, "ODTC", out, len));
  wt_fb_builder_free(b);
}

static void test_handmade(void) {
  wt_fb_builder b;
  uint8_t *out = NULL;
  size_t len = 0;
  wt_fb_ref_t t, v;

  wt_fb_builder_init(&b);  /* a well-formed version-1 file with one tensor */
  t = fb_tensor(&b, "w", WT_FLOAT, -1);
  v = wt_fb_create_ref_vector(&b, &t, 1);
  fb_checkpoint(&b, v, 1, &out, &len);
  wt_checkpoint *c = NULL;
  CHECK_OK(wt_checkpoint_read(out, len, &c));
  CHECK(c && c->version == 1 && c->n_trainable == 1 && ((float *)c->trainable[0].t.data)[1] == 2);
  wt_checkpoint_free(c);
  free(out);

  wt_fb_builder_init(&b);
  t = fb_tensor(&b, "big.weight", WT_FLOAT, 0);
  v = wt_fb_create_ref_vector(&b, &t, 1);
  fb_checkpoint(&b, v, 2, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_PARSE, "tensor 'big.weight' has external_data_offset 0 but "
                     "module_state.has_external_data is not set"));
  free(out);

  wt_fb_builder_init(&b);
  t = fb_tensor(&b, "half", 10, -1); /* float16 [2] with 8 bytes: a wrong byte count */
  v = wt_fb_create_ref_vector(&b, &t, 1);
  fb_checkpoint(&b, v, 2, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_PARSE, "tensor 'half': raw_data has 8 bytes; float16 [2] needs 4"));
  free(out);

  wt_fb_builder_init(&b);
  t = fb_tensor(&b, "dbl", 11, -1);
  v = wt_fb_create_ref_vector(&b, &t, 1);
  fb_checkpoint(&b, v, 2, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_UNSUPPORTED, "tensor 'dbl' has data type double (11)"));
  free(out);

  wt_fb_builder_init(&b);
  t = fb_tensor(&b, "x", WT_FLOAT, -1);
  v = wt_fb_create_ref_vector(&b, &t, 1);
  fb_checkpoint(&b, v, 7, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_UNSUPPORTED, "format version 7"));
  free(out);

  wt_fb_builder_init(&b);  /* the same parameter twice */
  wt_fb_ref_t two[2];
  two[0] = fb_tensor(&b, "dup", WT_FLOAT, -1);
  two[1] = fb_tensor(&b, "dup", WT_FLOAT, -1);
  v = wt_fb_create_ref_vector(&b, two, 2);
  fb_checkpoint(&b, v, 2, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_PARSE, "parameter 'dup' appears more than once"));
  free(out);

  /* 5000 offsets to one tensor: decoding would copy its data 5000 times */
  enum { N = 5000 };
  wt_fb_ref_t *refs = malloc(N * sizeof *refs);
  wt_fb_builder_init(&b);
  t = fb_tensor(&b, "shared", WT_FLOAT, -1);
  for (int i = 0; i < N; i++) refs[i] = t;
  v = wt_fb_create_ref_vector(&b, refs, N);
  fb_checkpoint(&b, v, 2, &out, &len);
  CHECK(expect_error(out, len, WT_ERR_PARSE, "shared more than once"));
  free(out);
  free(refs);
}

int main(void) {
  uint8_t *ort = NULL;
  size_t ort_len = 0;
  test_ort_checkpoint(&ort, &ort_len);

  wt_checkpoint *c = make_checkpoint(0, 1);
  uint8_t *full = NULL;
  size_t full_len = 0;
  round_trip(c, 1, &full, &full_len);
  round_trip(c, 0, NULL, NULL);
  c->n_ints = c->n_floats = c->n_strings = 0;  /* no property bag at all */
  round_trip(c, 1, NULL, NULL);
  c->n_ints = 3, c->n_floats = 2, c->n_strings = 2;
  wt_checkpoint_free(c);

  wt_checkpoint *nom = make_checkpoint(1, 0);
  uint8_t *nb = NULL;
  size_t nl = 0;
  round_trip(nom, 1, &nb, &nl);
  wt_checkpoint *nr = NULL;
  if (nb) CHECK_OK(wt_checkpoint_read(nb, nl, &nr));
  CHECK(nr && nr->is_nominal && nr->n_trainable == 3 && nr->trainable[0].t.data == NULL);
  CHECK(nr && nr->trainable[2].t.rank == 2 && nr->trainable[2].t.dims[1] == 5);
  wt_checkpoint_free(nr);
  wt_checkpoint_free(nom);

  /* writer input errors */
  wt_checkpoint *w = make_checkpoint(0, 0);
  uint8_t *o = NULL;
  size_t ol = 0;
  w->frozen[1].t.dtype = 11;
  CHECK(wt_checkpoint_write(w, 1, &o, &ol) == WT_ERR_INVALID_ARG && !o);
  CHECK(strstr(wt_error_message(), "'mask'") != NULL);
  wt_checkpoint_free(w);

  if (full) {
    test_errors(full, full_len);
    test_corruption(full, full_len, "synthetic checkpoint", 1, 5000);
  }
  if (nb) test_corruption(nb, nl, "nominal checkpoint", 1, 3000);
  if (ort) test_corruption(ort, ort_len, "ONNX Runtime checkpoint", ort_len / 97 + 1, 300);
  test_handmade();
  free(full);
  free(nb);
  free(ort);
  CHECK_DONE();
}
