/* Checkpoints with external data (ONNX Runtime's layout for checkpoints over 2 GB): every
 * tensor of 64 bytes or more goes to the side file at a 4-byte (8 for int64) aligned offset;
 * written, the side file assembled from the segments, read back and filled bit-identically, at
 * the checkpoint level and through the state; and the reader's errors for a side file that is
 * missing, too short, or claimed twice over. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/checkpoint.h"
#include "runtime/state.h"

static char *dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

static void tensor(wt_const_tensor *t, const char *name, int dtype, int64_t n, uint32_t seed) {
  memset(t, 0, sizeof *t);
  t->name = dup(name);
  t->t.dtype = dtype;
  t->t.rank = 1;
  t->t.dims[0] = n;
  size_t bytes = (size_t)n * wt_dtype_size(dtype);
  uint8_t *d = malloc(bytes + 1);
  for (size_t i = 0; i < bytes; i++) {
    seed = seed * 1664525u + 1013904223u;
    d[i] = (uint8_t)(dtype == WT_BOOL ? (seed >> 24) & 1 : seed >> 24);
  }
  t->t.data = d;
}

/* Trainable: 15 floats (60 bytes: stays inline), 33 floats (132: external); frozen: 9 int64
 * (72: external, 8-aligned), 101 bools (101: external), 3 int32 (inline); AdamW moments. */
static wt_checkpoint *make(void) {
  wt_checkpoint *c = calloc(1, sizeof *c);
  c->version = 2;
  c->n_trainable = 2;
  c->trainable = calloc(2, sizeof *c->trainable);
  tensor(&c->trainable[0], "a.small", WT_FLOAT, 15, 1);
  tensor(&c->trainable[1], "b.weight", WT_FLOAT, 33, 2);
  c->n_frozen = 3;
  c->frozen = calloc(3, sizeof *c->frozen);
  tensor(&c->frozen[0], "c.mask", WT_BOOL, 101, 3);
  tensor(&c->frozen[1], "d.ids", WT_INT64, 9, 4);
  tensor(&c->frozen[2], "e.few", WT_INT32, 3, 5);
  c->has_optimizer = 1;
  c->group_name = dup("group0");
  c->step = 7;
  c->initial_lr = 0.01f;
  c->n_param_states = 2;
  c->param_states = calloc(2, sizeof *c->param_states);
  for (int i = 0; i < 2; i++) {
    wt_ckpt_param_state *ps = &c->param_states[i];
    ps->param_name = dup(c->trainable[i].name);
    ps->n_momentums = 2;
    ps->momentums = calloc(2, sizeof *ps->momentums);
    tensor(&ps->momentums[0], "momentum0", WT_FLOAT, c->trainable[i].t.dims[0], 10 + i);
    tensor(&ps->momentums[1], "momentum1", WT_FLOAT, c->trainable[i].t.dims[0], 20 + i);
  }
  return c;
}

/* The side file from the segments: zeros between them, zeros for a segment without data. */
static uint8_t *assemble(const wt_ckpt_segment *s, int n, uint64_t len) {
  uint8_t *f = calloc(1, (size_t)len + 1);
  for (int i = 0; i < n; i++)
    if (s[i].data) memcpy(f + s[i].offset, s[i].data, (size_t)s[i].nbytes);
  return f;
}

static void fill(const wt_ckpt_segment *s, int n, const uint8_t *file) {
  for (int i = 0; i < n; i++) memcpy(s[i].data, file + s[i].offset, (size_t)s[i].nbytes);
}

static int error_has(int rc, const char *needle) {
  if (rc == WT_OK) return 0;
  if (strstr(wt_error_message(), needle)) return 1;
  fprintf(stderr, "error '%s' lacks '%s'\n", wt_error_message(), needle);
  return 0;
}

int main(void) {
  wt_checkpoint *c = make();
  uint8_t *inline_bytes = NULL, *head = NULL;
  size_t inline_len = 0, head_len = 0;
  CHECK_OK(wt_checkpoint_write(c, 1, &inline_bytes, &inline_len));
  wt_ckpt_segment *segs = NULL;
  int n = 0;
  uint64_t ext_len = 0;
  CHECK_OK(wt_checkpoint_write_ext(c, 1, &head, &head_len, &segs, &n, &ext_len));
  /* b.weight, c.mask, d.ids and the two moments of b.weight: everything of >= 64 bytes */
  CHECK(n == 5);
  CHECK(head_len < inline_len - 400);
  uint64_t end = 0;
  for (int i = 0; i < n; i++) {
    CHECK(segs[i].nbytes >= WT_CKPT_EXTERNAL_MIN && segs[i].offset >= end);
    CHECK(segs[i].offset % (strcmp(segs[i].name, "d.ids") ? 4 : 8) == 0);
    end = segs[i].offset + segs[i].nbytes;
  }
  CHECK(end == ext_len);
  uint8_t *side = assemble(segs, n, ext_len);

  /* read back: the same checkpoint, bit for bit (written inline again, compared as bytes) */
  wt_checkpoint *r = NULL;
  CHECK_OK(wt_checkpoint_read_ext(head, head_len, ext_len, &r));
  CHECK(r && r->has_external_data && r->n_segments == n);
  if (r) {
    fill(r->segments, r->n_segments, side);
    uint8_t *again = NULL;
    size_t again_len = 0;
    CHECK_OK(wt_checkpoint_write(r, 1, &again, &again_len));
    CHECK(again && again_len == inline_len && !memcmp(again, inline_bytes, inline_len));
    free(again);
  }
  wt_checkpoint_free(r);

  /* through the state: load with external data, fill, save inline = the original */
  wt_state *s = NULL;
  CHECK_OK(wt_state_load_ext(head, head_len, NULL, ext_len, &s));
  CHECK(s && s->n_pending == n);
  if (s) {
    fill(s->pending, s->n_pending, side);
    wt_state_pending_done(s);
    uint8_t *saved = NULL, *head2 = NULL;
    size_t saved_len = 0, head2_len = 0;
    CHECK_OK(wt_state_save(s, 1, &saved, &saved_len));
    CHECK(saved && saved_len == inline_len && !memcmp(saved, inline_bytes, inline_len));
    wt_ckpt_segment *segs2 = NULL;
    int n2 = 0;
    uint64_t ext2 = 0;
    CHECK_OK(wt_state_save_ext(s, 1, &head2, &head2_len, &segs2, &n2, &ext2));
    CHECK(n2 == n && ext2 == ext_len && head2_len == head_len && !memcmp(head2, head, head_len));
    uint8_t *side2 = assemble(segs2, n2, ext2);
    CHECK(!memcmp(side2, side, (size_t)ext_len));
    free(side2);
    free(segs2);
    free(saved);
    free(head2);
  }
  wt_state_free(s);

  /* errors: no side file, one cut short, and tensors claiming more than the file holds */
  CHECK(error_has(wt_checkpoint_read(head, head_len, &r), "the checkpoint's name + '.data'"));
  CHECK(error_has(wt_checkpoint_read_ext(head, head_len, ext_len - 1, &r), "past its end"));
  CHECK(error_has(wt_checkpoint_read_ext(head, head_len, ext_len - 1, &r), "is truncated or belongs to another checkpoint"));
  CHECK(error_has(wt_state_load_ext(head, head_len, NULL, 8, &s), "past its end"));
  CHECK(r == NULL && s == NULL);
  /* a header that places two tensors at offset 0 of a file only as big as the larger one */
  for (int i = 0; i < n; i++) segs[i].offset = 0;
  CHECK(n >= 2);
  {
    uint64_t most = 0;
    for (int i = 0; i < n; i++) most = segs[i].nbytes > most ? segs[i].nbytes : most;
    /* rewrite the offsets in the header: each external_data_offset is an 8-byte field; find
     * them by value and set them to 0 */
    uint8_t *h = malloc(head_len);
    memcpy(h, head, head_len);
    wt_checkpoint *orig = NULL;
    CHECK_OK(wt_checkpoint_read_ext(head, head_len, ext_len, &orig));
    for (int i = 0; orig && i < orig->n_segments; i++) {
      uint64_t off = orig->segments[i].offset;
      if (!off) continue;
      for (size_t k = 0; k + 8 <= head_len; k += 4)
        if (!memcmp(h + k, &off, 8)) memset(h + k, 0, 8);
    }
    wt_checkpoint_free(orig);
    CHECK(error_has(wt_checkpoint_read_ext(h, head_len, most, &r), "claim more bytes of the external data file"));
    free(h);
  }

  free(side);
  free(segs);
  free(head);
  free(inline_bytes);
  wt_checkpoint_free(c);
  CHECK_DONE();
}
