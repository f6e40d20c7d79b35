/* Weights packed once for the GEMM (frozen weights read by every step): a table of candidate
 * operands, keyed by their address, that the GEMM ops consult before each product.
 *
 * A table belongs to its owner (a training module), which hands it to the plans it runs
 * (ops/exec.h): two modules never see each other's panels. The owner lists its frozen weights
 * as candidates (wt_prepack_add). A GEMM op asks wt_prepack_find for its op(B): a candidate
 * records how it was asked for (trans_b, K, N, ldb: its first use wins), and gets its panels
 * once the owner has given it a buffer (wt_prepack_give, after its first step, so that buffers
 * go only to weights some product reads, and only when all of them fit in the owner's budget).
 * The panels are packed at the first use after that, and again after wt_prepack_stale (the
 * owner's weights were written, by it or by another module over the same state: the owner
 * checks before each step). wt_sgemm_prepacked on them gives the bits of wt_sgemm_half on the
 * weight (backend/cpu/gemm.h): nothing here changes a result.
 * Called from the thread running the plan (the ops' run), never from the pool's workers. */
#ifndef WT_KERNELS_GEMM_PREPACK_H
#define WT_KERNELS_GEMM_PREPACK_H

#include <stddef.h>
#include <stdint.h>

typedef struct wt_prepack wt_prepack;

/* An empty table (NULL: out of memory), and its end (the buffers given stay the caller's). */
wt_prepack *wt_prepack_new(void);
void wt_prepack_free(wt_prepack *t);
/* B (float, or float16 when half) of rows x cols elements becomes a candidate; 0, or -1 when
 * the table is full (the weight is then packed per product, as before). */
int wt_prepack_add(wt_prepack *t, const void *B, int half, int64_t rows, int64_t cols);
/* Floats of packed panels each candidate that a product asked for (one way) needs: sizes[i]
 * for the i-th such candidate in the table's order, at most cap of them; returns how many there
 * are. */
int wt_prepack_wanted(const wt_prepack *t, int64_t *sizes, int cap);
/* Gives the i-th wanted candidate (wt_prepack_wanted's order) its buffer (owned by the caller,
 * sizes[i] floats, 16-byte aligned). */
void wt_prepack_give(wt_prepack *t, int i, float *buf);
/* Weights were written: every candidate's panels are packed again at their next use. */
void wt_prepack_stale(wt_prepack *t);
/* The packed panels of op(B) for this product (packing them first when stale), or NULL: t is
 * NULL, B is no candidate, has no buffer yet, or was first asked for another way (a frozen
 * weight read as both W and W^T keeps its first). half: B is float16. */
const float *wt_prepack_find(wt_prepack *t, const void *B, int half, int trans_b, int64_t K,
                             int64_t N, int64_t ldb);

#endif
