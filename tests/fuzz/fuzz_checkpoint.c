/* libFuzzer: the ODTC checkpoint reader on arbitrary bytes. A checkpoint that parses is
 * written (with and without optimizer state), read back and written again: the two writes
 * must be identical. The same bytes through the public state API (load, accessors, save,
 * reload). And as the header of a checkpoint with external data (a side file of zeros whose
 * length the size of the input picks): every tensor it places lies within that file; a
 * checkpoint that parses is written with external data, its side file assembled, read back,
 * and must write inline as the original does. A loaded state saves its trainable parameters
 * alone and loads them back (state_part.c); the fuzzed bytes load into their own state or are
 * refused. */
#include "fuzz_common.h"
#include "io/checkpoint.h"
#include "runtime/state.h"
#include "runtime/state_part.h"
#include "webtrain.h"

static void roundtrip(const wt_checkpoint *c, int with_opt) {
  uint8_t *b1 = NULL, *b2 = NULL;
  size_t l1 = 0, l2 = 0;
  FUZZ_ASSERT(wt_checkpoint_write(c, with_opt, &b1, &l1) == WT_OK, "a checkpoint that was read can be written");
  wt_checkpoint *c2 = NULL;
  FUZZ_ASSERT(wt_checkpoint_read(b1, l1, &c2) == WT_OK, "what webtrain writes, it reads");
  FUZZ_ASSERT(wt_checkpoint_write(c2, with_opt, &b2, &l2) == WT_OK, "re-read checkpoint writes");
  FUZZ_ASSERT(l1 == l2 && memcmp(b1, b2, l1) == 0, "write(read(write(c))) == write(c)");
  wt_checkpoint_free(c2);
  free(b1);
  free(b2);
}

/* Fills the segments from the side file (checking each lies within it). */
static void fill(const wt_ckpt_segment *sg, int n, const uint8_t *side, uint64_t side_len) {
  for (int i = 0; i < n; i++) {
    FUZZ_ASSERT(sg[i].offset <= side_len && sg[i].nbytes <= side_len - sg[i].offset,
                "an external tensor lies within the side file");
    memcpy(sg[i].data, side + sg[i].offset, (size_t)sg[i].nbytes);
  }
}

static void external(const uint8_t *data, size_t size) {
  uint64_t side_len = (uint64_t)(size % 4096) * 16;
  uint8_t *side = calloc(1, (size_t)side_len + 1);
  wt_checkpoint *c = NULL;
  if (side && wt_checkpoint_read_ext(data, size, side_len, &c) == WT_OK) {
    fill(c->segments, c->n_segments, side, side_len);
    uint8_t *inl = NULL, *head = NULL, *again = NULL;
    size_t inl_len = 0, head_len = 0, again_len = 0;
    wt_ckpt_segment *sg = NULL;
    int n = 0;
    uint64_t ext_len = 0;
    FUZZ_ASSERT(wt_checkpoint_write(c, 1, &inl, &inl_len) == WT_OK, "a checkpoint that was read can be written");
    FUZZ_ASSERT(wt_checkpoint_write_ext(c, 1, &head, &head_len, &sg, &n, &ext_len) == WT_OK,
                "... and written with external data");
    uint8_t *side2 = calloc(1, (size_t)ext_len + 1);
    for (int i = 0; side2 && i < n; i++)
      if (sg[i].data) memcpy(side2 + sg[i].offset, sg[i].data, (size_t)sg[i].nbytes);
    wt_checkpoint *c2 = NULL;
    FUZZ_ASSERT(side2 && wt_checkpoint_read_ext(head, head_len, ext_len, &c2) == WT_OK,
                "what webtrain writes with external data, it reads");
    fill(c2->segments, c2->n_segments, side2, ext_len);
    FUZZ_ASSERT(wt_checkpoint_write(c2, 1, &again, &again_len) == WT_OK, "re-read checkpoint writes");
    FUZZ_ASSERT(again_len == inl_len && !memcmp(again, inl, inl_len), "external data round trip");
    wt_checkpoint_free(c2);
    free(side2);
    free(sg);
    free(inl);
    free(head);
    free(again);
  }
  wt_checkpoint_free(c);
  wt_state *s = NULL;
  if (side && wt_state_load_ext(data, size, NULL, side_len, &s) == WT_OK) {
    fill(s->pending, s->n_pending, side, side_len);
    wt_state_pending_done(s);
    wt_state_free(s);
  }
  free(side);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  external(data, size);
  wt_checkpoint *c = NULL;
  if (wt_checkpoint_read(data, size, &c) == WT_OK) {
    for (int i = 0; i < c->n_trainable; i++)
      wt_fuzz_touch(c->trainable[i].t.data, c->trainable[i].t.data ? wt_nbytes(&c->trainable[i].t) : 0);
    for (int i = 0; i < c->n_frozen; i++)
      wt_fuzz_touch(c->frozen[i].t.data, c->frozen[i].t.data ? wt_nbytes(&c->frozen[i].t) : 0);
    roundtrip(c, 0);
    roundtrip(c, 1);
    wt_checkpoint_free(c);
  }
  wt_state *s = NULL;
  if (wt_state_load(data, size, &s) == WT_OK) {
    int32_t n = wt_state_param_count(s);
    for (int32_t i = 0; i < n; i++) {
      (void)wt_state_param_name(s, i);
      int32_t r = wt_state_param_rank(s, i);
      for (int32_t a = 0; a < r; a++) (void)wt_state_param_dim(s, i, a);
    }
    int64_t total = wt_state_params_size(s, 0);
    if (total >= 0 && total < (1 << 24)) {
      float *buf = malloc(sizeof(float) * (size_t)(total + 1));
      if (buf && wt_state_params_copy_to(s, 0, buf, total) == WT_OK)
        FUZZ_ASSERT(wt_state_params_copy_from(s, 0, buf, total) == WT_OK, "params copy back");
      free(buf);
    }
    for (int32_t i = 0; i < wt_state_property_count(s); i++) {
      (void)wt_state_property_name(s, i);
      if (wt_state_property_type(s, i) == 3) {
        const char *v = wt_state_property_string(s, i);
        if (v) wt_fuzz_touch(v, strlen(v));
      }
    }
    /* loaded in place (the state keeps the bytes): the same state, saved to the same bytes */
    uint8_t *own = malloc(size + 1);
    memcpy(own, data, size);
    wt_state *si = NULL;
    FUZZ_ASSERT(wt_state_load_owned(own, size, &si) == WT_OK, "a checkpoint that loads loads in place");
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, l2 = 0;
    FUZZ_ASSERT(wt_state_save(s, 1, &b1, &l1) == WT_OK && wt_state_save(si, 1, &b2, &l2) == WT_OK,
                "both save");
    FUZZ_ASSERT(l1 == l2 && !memcmp(b1, b2, l1), "in place and copied loads are the same state");
    wt_free(b1);
    wt_free(b2);
    wt_state_free(si);
    for (int opt = 0; opt < 2; opt++) {
      uint8_t *b = NULL;
      size_t l = 0;
      FUZZ_ASSERT(wt_state_save(s, opt, &b, &l) == WT_OK, "a loaded state can be saved");
      wt_state *s2 = NULL;
      FUZZ_ASSERT(wt_state_load(b, l, &s2) == WT_OK, "a saved state loads");
      FUZZ_ASSERT(wt_state_param_count(s2) == n, "parameter count survives save/load");
      wt_state_free(s2);
      wt_free(b);
    }
    /* the trainable parameters alone load back into the state they came from */
    uint8_t *tb = NULL;
    size_t tl = 0;
    if (wt_state_save_trainable(s, 1, &tb, &tl) == WT_OK)
      FUZZ_ASSERT(wt_state_load_params(s, tb, tl) == WT_OK, "trainable-only checkpoint loads back");
    free(tb);
    (void)wt_state_load_params(s, data, size); /* the fuzzed checkpoint into its own state */
    wt_state_free(s);
  }
  wt_error_clear();
  return 0;
}
