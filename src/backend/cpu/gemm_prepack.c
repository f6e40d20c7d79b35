/* The table of weights packed once (see gemm_prepack.h). A fixed table: no allocation, and a
 * lookup is a short scan done once per GEMM op (not per block). */
#include "backend/cpu/gemm_prepack.h"

#include "backend/cpu/gemm.h"

#ifndef WT_PREPACK_MAX
#define WT_PREPACK_MAX 256
#endif

typedef struct entry {
  const void *owner, *B;
  int half;
  int64_t rows, cols;
  int asked;                 /* a product asked for it: trans_b, K, N, ldb below are its */
  int trans_b;
  int64_t K, N, ldb;
  float *buf;                /* the owner's, once given */
  int packed;                /* buf holds B's current panels */
} entry;

static entry g_table[WT_PREPACK_MAX];
static int g_n;

int wt_prepack_add(const void *owner, const void *B, int half, int64_t rows, int64_t cols) {
  if (g_n == WT_PREPACK_MAX) return -1;
  g_table[g_n++] = (entry){owner, B, half, rows, cols, 0, 0, 0, 0, 0, NULL, 0};
  return 0;
}

int wt_prepack_wanted(const void *owner, int64_t *sizes, int cap) {
  int n = 0;
  for (int i = 0; i < g_n; i++) {
    const entry *e = &g_table[i];
    if (e->owner != owner || !e->asked || e->buf) continue;
    if (n < cap) sizes[n] = wt_gemm_packed_b_floats(e->K, e->N);
    n++;
  }
  return n;
}

void wt_prepack_give(const void *owner, int k, float *buf) {
  for (int i = 0, n = 0; i < g_n; i++) {
    entry *e = &g_table[i];
    if (e->owner != owner || !e->asked || e->buf) continue;
    if (n++ == k) {
      e->buf = buf;
      e->packed = 0;
      return;
    }
  }
}

void wt_prepack_stale(void) {
  for (int i = 0; i < g_n; i++) g_table[i].packed = 0;
}

void wt_prepack_remove(const void *owner) {
  int n = 0;
  for (int i = 0; i < g_n; i++)
    if (g_table[i].owner != owner) g_table[n++] = g_table[i];
  g_n = n;
}

const float *wt_prepack_find(const void *B, int half, int trans_b, int64_t K, int64_t N, int64_t ldb) {
  for (int i = 0; i < g_n; i++) {
    entry *e = &g_table[i];
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
