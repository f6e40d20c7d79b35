/* Checkpoints loaded in place (weights held once): wt_state_load_owned keeps the
 * checkpoint's bytes as the parameters' storage instead of copying every tensor out of them, so
 * a load holds the parameters once. Aligned tensors point into the bytes, misaligned ones are
 * copied, and the state is the same state as a copying load (saved: the same bytes). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/checkpoint.h"
#include "runtime/state.h"
#include "webtrain.h"

static char *dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

static void tensor(wt_const_tensor *t, const char *name, int dtype, int64_t n, int seed) {
  memset(t, 0, sizeof *t);
  t->name = dup(name);
  t->t.dtype = dtype;
  t->t.rank = 1;
  t->t.dims[0] = n;
  size_t bytes = (size_t)n * wt_dtype_size(dtype);
  uint8_t *d = malloc(bytes + 1);
  for (size_t i = 0; i < bytes; i++) d[i] = (uint8_t)(i * 13 + (size_t)seed);
  t->t.data = d;
}

/* trainable w (1000 floats) with AdamW moments, frozen ids (9 int64) and flag (3 bools) */
static uint8_t *bytes_of(size_t *len) {
  wt_checkpoint *c = calloc(1, sizeof *c);
  c->version = 2;
  c->n_trainable = 1;
  c->trainable = calloc(1, sizeof *c->trainable);
  tensor(&c->trainable[0], "w", WT_FLOAT, 1000, 1);
  c->n_frozen = 2;
  c->frozen = calloc(2, sizeof *c->frozen);
  tensor(&c->frozen[0], "ids", WT_INT64, 9, 2);
  tensor(&c->frozen[1], "flag", WT_BOOL, 3, 3);
  c->has_optimizer = 1;
  c->group_name = dup("group0");
  c->step = 3;
  c->initial_lr = 0.1f;
  c->n_param_states = 1;
  c->param_states = calloc(1, sizeof *c->param_states);
  c->param_states[0].param_name = dup("w");
  c->param_states[0].n_momentums = 2;
  c->param_states[0].momentums = calloc(2, sizeof(wt_const_tensor));
  tensor(&c->param_states[0].momentums[0], "momentum0", WT_FLOAT, 1000, 4);
  tensor(&c->param_states[0].momentums[1], "momentum1", WT_FLOAT, 1000, 5);
  uint8_t *out = NULL;
  CHECK_OK(wt_checkpoint_write(c, 1, &out, len));
  wt_checkpoint_free(c);
  return out;
}

static int inside(const void *p, const uint8_t *b, size_t len) {
  return (const uint8_t *)p >= b && (const uint8_t *)p < b + len;
}

int main(void) {
  size_t len;
  uint8_t *bytes = bytes_of(&len);

  /* the checkpoint level: aligned tensors borrowed, copies where the bytes sit misaligned */
  wt_checkpoint *c;
  CHECK_OK(wt_checkpoint_read_in_place(bytes, len, 0, &c));
  CHECK(inside(c->trainable[0].t.data, bytes, len));
  CHECK(inside(c->param_states[0].momentums[0].t.data, bytes, len));
  wt_checkpoint_free(c); /* frees none of them (ASan would say) */
  uint8_t *odd = malloc(len + 1);
  memcpy(odd + 1, bytes, len);
  CHECK_OK(wt_checkpoint_read_in_place(odd + 1, len, 0, &c));
  CHECK(!inside(c->trainable[0].t.data, odd + 1, len) || (uintptr_t)c->trainable[0].t.data % 4 == 0);
  for (int i = 0; i < c->n_frozen; i++)
    if (c->frozen[i].t.dtype == WT_INT64) CHECK(!inside(c->frozen[i].t.data, odd + 1, len) || (uintptr_t)c->frozen[i].t.data % 8 == 0);
  wt_checkpoint_free(c);
  free(odd);

  /* the state: in place, the same state as a copying load; training writes land in place */
  wt_state *copied, *placed;
  CHECK_OK(wt_state_load(bytes, len, &copied));
  uint8_t *own = malloc(len);
  memcpy(own, bytes, len);
  CHECK_OK(wt_state_load_owned(own, len, &placed));
  int w = wt_state_param_index(placed, "w");
  CHECK(w >= 0 && inside(wt_state_param_data(placed, w), own, len) && placed->backing == own);
  uint8_t *a, *b;
  size_t la, lb;
  CHECK_OK(wt_state_save(copied, 1, &a, &la));
  CHECK_OK(wt_state_save(placed, 1, &b, &lb));
  CHECK(la == lb && !memcmp(a, b, la));
  wt_free(a);
  wt_free(b);
  float ones[1000];
  for (int i = 0; i < 1000; i++) ones[i] = 1.0f;
  CHECK_OK(wt_state_param_update(placed, w, ones, 1000));
  CHECK(wt_state_param_data(placed, w)[999] == 1.0f);
  wt_state_free(copied);
  wt_state_free(placed); /* frees the bytes once, and nothing inside them (ASan would say) */

  /* a checkpoint with nothing to read in place (no tensor data) keeps no bytes */
  wt_checkpoint *empty = calloc(1, sizeof *empty);
  empty->version = 2;
  uint8_t *eb;
  size_t el;
  CHECK_OK(wt_checkpoint_write(empty, 0, &eb, &el));
  wt_checkpoint_free(empty);
  wt_state *es;
  CHECK_OK(wt_state_load_owned(eb, el, &es));
  CHECK(es->backing == NULL);
  wt_state_free(es);
  free(bytes);
  return wt_check_failures ? 1 : 0;
}
