/* Weights packed once for the GEMM (frozen weights read by every step): a table of candidate
 * operands, keyed by their address, that the GEMM ops consult before each product.
 *
 * The owner (a training module) lists its frozen weights as candidates (wt_prepack_add). A GEMM
 * op asks wt_prepack_find for its op(B): a candidate records how it was asked for (trans_b, K,
 * N, ldb: its first use wins), and gets its panels once the owner has given it a buffer
 * (wt_prepack_give, after its first step, so that buffers go only to weights some product reads,
 * and only when all of them fit in the owner's budget). The panels are packed at the first use after that, and again
 * after wt_prepack_stale (the owner's weights were written). wt_sgemm_prepacked on them gives
 * the bits of wt_sgemm_half on the weight (backend/cpu/gemm.h): nothing here changes a result.
 * Called from the thread running the plan (the ops' run), never from the pool's workers. */
#ifndef WT_KERNELS_GEMM_PREPACK_H
#define WT_KERNELS_GEMM_PREPACK_H

#include <stddef.h>
#include <stdint.h>

/* B (float, or float16 when half) of rows x cols elements becomes a candidate of owner; 0, or
 * -1 when the table is full (the weight is then packed per product, as before). */
int wt_prepack_add(const void *owner, const void *B, int half, int64_t rows, int64_t cols);
/* Floats of packed panels each candidate of owner that a product asked for (one way) needs:
 * sizes[i] for the i-th such candidate in the table's order, at most cap of them; returns how
 * many there are. */
int wt_prepack_wanted(const void *owner, int64_t *sizes, int cap);
/* Gives the i-th wanted candidate of owner (wt_prepack_wanted's order) its buffer (owned by the
 * caller, sizes[i] floats, 16-byte aligned). */
void wt_prepack_give(const void *owner, int i, float *buf);
/* Weights were written: every candidate's panels are packed again at their next use. All
 * owners' (two modules over one state share their weights, and a product reads the first
 * candidate of its weight, whichever module listed it). */
void wt_prepack_stale(void);
/* Drops the owner's candidates (before it frees their buffers). */
void wt_prepack_remove(const void *owner);
/* The packed panels of op(B) for this product (packing them first when stale), or NULL: B is no
 * candidate, has no buffer yet, or was first asked for another way (a frozen weight read as
 * both W and W^T keeps its first). half: B is float16. */
const float *wt_prepack_find(const void *B, int half, int trans_b, int64_t K, int64_t N, int64_t ldb);

#endif
