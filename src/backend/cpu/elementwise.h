/* Elementwise kernels: numpy broadcasting iteration, binary arithmetic / comparison / logic
 * rows, and float unary maps. Used by src/ops/unary.c and src/ops/binary.c.
 *
 * Broadcast model: the output shape is iterated as [outer dims..., inner]; after dropping
 * size-1 dims and merging dims that are contiguous for every operand, each operand's stride
 * along the inner dim is 0 (broadcast) or 1 (contiguous). Row kernels take that 0/1 stride,
 * so same-shape, scalar and bias-row operands all reach a SIMD loop.
 * Bool elements are uint8_t 0/1 (any non-zero input byte counts as true). */
#ifndef WT_KERNELS_ELEMENTWISE_H
#define WT_KERNELS_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/elementwise_kinds.h"

#define WT_BCAST_MAX_IN 3
#define WT_BCAST_MAX_RANK 8

typedef struct wt_bcast {
  int n_in;
  int rank;                                         /* >= 1 after wt_bcast_init */
  int64_t dims[WT_BCAST_MAX_RANK];                  /* collapsed output dims */
  int64_t strides[WT_BCAST_MAX_IN][WT_BCAST_MAX_RANK]; /* element strides per operand, 0 = broadcast */
} wt_bcast;

/* Plans the iteration of out_dims over n_in operands whose shapes broadcast to it (caller
 * has checked broadcastability). */
void wt_bcast_init(wt_bcast *p, int out_rank, const int64_t *out_dims, int n_in,
                   const int *in_ranks, const int64_t *const *in_dims);

/* One inner row: n elements; ptrs[k] points at operand k's first element, inner stride
 * st[k] (0 or 1) in elements; out is contiguous. Returns 0 or a non-zero code that stops
 * the iteration and is returned by wt_bcast_run. */
typedef int (*wt_bcast_row_fn)(void *user, int64_t n, const void *const *ptrs, const int *st,
                               void *out);

int wt_bcast_run(const wt_bcast *p, const void *const *ins, const size_t *elem_size, void *out,
                 size_t out_elem_size, wt_bcast_row_fn fn, void *user);
/* The same on the thread pool from WT_EW_THREAD_MIN output elements: rows in blocks of about
 * WT_EW_BLOCK elements, a longer row cut into pieces of WT_EW_BLOCK. fn must be a pure map of
 * its row (called concurrently on disjoint rows), taking the same path for an element whatever
 * piece it is in (the row kernels here do). Returns 0 or one of fn's codes. */
int wt_bcast_run_pool(const wt_bcast *p, const void *const *ins, const size_t *elem_size,
                      void *out, size_t out_elem_size, wt_bcast_row_fn fn, void *user);

/* out[i] = a[i*sa] op b[i*sb]. Float rows never fail. Integer rows return 1 on division
 * (or Mod) by zero; overflow wraps (two's complement) instead of being undefined. */
void wt_ew_binary_f32(wt_ew_binop op, int64_t n, const float *a, int sa, const float *b, int sb,
                      float *out);
int wt_ew_binary_i32(wt_ew_binop op, int64_t n, const int32_t *a, int sa, const int32_t *b, int sb,
                     int32_t *out);
int wt_ew_binary_i64(wt_ew_binop op, int64_t n, const int64_t *a, int sa, const int64_t *b, int sb,
                     int64_t *out);

/* Integer power with wrapping; negative exponents give the truncated 1 / a^-e. */
int64_t wt_ew_ipow(int64_t a, int64_t e);

/* Comparisons -> bool (uint8_t). */
void wt_ew_compare_f32(wt_ew_cmpop op, int64_t n, const float *a, int sa, const float *b, int sb,
                       uint8_t *out);
void wt_ew_compare_i32(wt_ew_cmpop op, int64_t n, const int32_t *a, int sa, const int32_t *b,
                       int sb, uint8_t *out);
void wt_ew_compare_i64(wt_ew_cmpop op, int64_t n, const int64_t *a, int sa, const int64_t *b,
                       int sb, uint8_t *out);
void wt_ew_compare_bool(wt_ew_cmpop op, int64_t n, const uint8_t *a, int sa, const uint8_t *b,
                        int sb, uint8_t *out);

void wt_ew_logic(wt_ew_logicop op, int64_t n, const uint8_t *a, int sa, const uint8_t *b, int sb,
                 uint8_t *out);

/* wt_ew_unary_f32 and wt_ew_grad_f32 split maps of at least WT_EW_THREAD_MIN elements into
 * blocks of WT_EW_BLOCK on the thread pool (base/pool.h); maps that cost tens of cycles an
 * element (exp, erf, tanh and what is built on them, libm calls) split from
 * WT_EW_HEAVY_THREAD_MIN elements in blocks of WT_EW_HEAVY_BLOCK. Blocks are multiples of 4
 * from element 0, so the bits do not depend on them. */
#define WT_EW_BLOCK 16384
#ifndef WT_EW_THREAD_MIN
#define WT_EW_THREAD_MIN (4 * WT_EW_BLOCK)
#endif
#define WT_EW_HEAVY_BLOCK 2048
#ifndef WT_EW_HEAVY_THREAD_MIN
#define WT_EW_HEAVY_THREAD_MIN (2 * WT_EW_HEAVY_BLOCK)
#endif

/* Float unary maps y = f(x); x == y (in place) is allowed. */
void wt_ew_unary_f32(wt_ew_unop op, int64_t n, const float *x, float *y, float alpha, float beta);

/* Activation gradients dx = dy * f'(.) (ONNX Runtime's com.microsoft *Grad ops). t is the
 * forward input X or output Y, as noted; dx may alias dy or t. */
void wt_ew_grad_f32(wt_ew_gradop op, int64_t n, const float *dy, const float *t, float *dx,
                    float alpha);

/* x + bias row-wise: y[r * nb + j] = x[r * nb + j] + b[j] for n elements (n % nb == 0). */
void wt_ew_add_bias_f32(int64_t n, const float *x, const float *b, int64_t nb, float *y);

/* DivGrad (y = a / b with broadcasting): da = dy / b and db = -dy * a / b^2, each summed over
 * the axes its operand was broadcast along. plan iterates dy's shape over {dy, a, b}; da
 * (a's shape) and db (b's shape) may be NULL; they are overwritten. */
void wt_ew_div_grad_f32(const wt_bcast *plan, const float *dy, const float *a, const float *b,
                        float *da, int64_t na, float *db, int64_t nb);

#endif
