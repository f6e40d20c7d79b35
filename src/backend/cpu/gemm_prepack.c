/* A table of weights packed once (see gemm_prepack.h). Fixed-size: one allocation when made,
 * none after, and a lookup is a short scan done once per GEMM op (not per block). */
#include "backend/cpu/gemm_prepack.h"

#include <stdlib.h>

#include "backend/cpu/gemm.h"

#ifndef WT_PREPACK_MAX
#define WT_PREPACK_MAX 256
#endif

typedef struct entry {
  const void *B;
  int half;
  int64_t rows, cols;
  int asked;                 /* a product asked for it: trans_b, K, N, ldb below are its */
  int trans_b;
  int64_t K, N, ldb;
  float *buf;                /* the owner's, once given */
  int packed;                /* buf holds B's current panels */
} entry;

struct wt_prepack {
  int n;
  entry e[WT_PREPACK_MAX];
};

wt_prepack *wt_prepack_new(void) { return calloc(1, sizeof(wt_prepack)); }

void wt_prepack_free(wt_prepack *t) { free(t); }

int wt_prepack_add(wt_prepack *t, const void *B, int half, int64_t rows, int64_t cols) {
  if (t->n == WT_PREPACK_MAX) return -1;
  t->e[t->n++] = (entry){B, half, rows, cols, 0, 0, 0, 0, 0, NULL, 0};
  return 0;
}

int wt_prepack_wanted(const wt_prepack *t, int64_t *sizes, int cap) {
  int n = 0;
  for (int i = 0; i < t->n; i++) {
    const entry *e = &t->e[i];
    if (!e->asked || e->buf) continue;
    if (n < cap) sizes[n] = wt_gemm_packed_b_floats(e->K, e->N);
    n++;
  }
  return n;
}

void wt_prepack_give(wt_prepack *t, int k, float *buf) {
  for (int i = 0, n = 0; i < t->n; i++) {
    entry *e = &t->e[i];
    if (!e->asked || e->buf) continue;
    if (n++ == k) {
      e->buf = buf;
      e->packed = 0;
      return;
    }
  }
}

void wt_prepack_stale(wt_prepack *t) {
  for (int i = 0; i < t->n; i++) t->e[i].packed = 0;
}

const float *wt_prepack_find(wt_prepack *t, const void *B, int half, int trans_b, int64_t K,
                             int64_t N, int64_t ldb) {
  if (!t) return NULL;
  for (int i = 0; i < t->n; i++) {
    entry *e = &t->e[i];
    if (e->B != B || e->half != half || K * N != e->rows * e->cols) continue;
    if (!e->asked) {
      /* The whole weight, contiguous: [N, K] read as W^T, or [K, N]. */
      if (ldb != (trans_b ? K : N) || e->rows != (trans_b ? N : K)) return NULL;
      e->asked = 1;
      e->trans_b = trans_b;
      e->K = K;
      e->N = N;
      e->ldb = ldb;
    }
    if (e->trans_b != trans_b || e->K != K || e->N != N || e->ldb != ldb || !e->buf) return NULL;
    if (!e->packed) {
      wt_gemm_pack_b(half ? WT_GEMM_B_HALF : 0, trans_b, K, N, B, ldb, e->buf);
      e->packed = 1;
    }
    return e->buf;
  }
  return NULL;
}
