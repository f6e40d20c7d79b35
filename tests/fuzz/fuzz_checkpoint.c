/* libFuzzer: the ODTC checkpoint reader on arbitrary bytes. A checkpoint that parses is
 * written (with and without optimizer state), read back and written again: the two writes
 * must be identical. The same bytes through the public state API (load, accessors, save,
 * reload). */
#include "fuzz_common.h"
#include "io/checkpoint.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
    wt_state_free(s);
  }
  wt_error_clear();
  return 0;
}
