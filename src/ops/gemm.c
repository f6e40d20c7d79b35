/* Op family: gemm. MatMul (numpy matmul: 1-D promotion, broadcast batch dims) and Gemm
 * (Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to [M, N]).
 * Both run on wt_sgemm; float32, with A and B also float16 (frozen weights reached through a Cast
 * the shape pass skips: wt_sgemm_half widens them while packing). Gradient rules emit Gemm on 2-D views (like ONNX Runtime)
 * or MatMul + Transpose + ReduceSum for batched / broadcast / 1-D operands. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_prepack.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"

#define MM_MAX_BATCH (WT_MAX_RANK - 1)

/* Y = alpha * op(A) op(B) + beta * Y (ReLU after when relu), reading op(B)'s packed panels when
 * B is a frozen weight packed once (backend/cpu/gemm_prepack.h): the same bits either way. */
static void gemm_product(int half, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                         const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                         float *Y, int64_t ldy, int relu) {
  const float *Bp = NULL;
  if (wt_gemm_packs_b(half, ta, tb, M, N, K, lda, ldb))
    Bp = wt_prepack_find(B, (half & WT_GEMM_B_HALF) != 0, tb, K, N, ldb);
  wt_sgemm_prepacked(half, ta, tb, M, N, K, alpha, A, lda, B, ldb, Bp, beta, Y, ldy, relu);
}

/* ---- MatMul ----------------------------------------------------------------------------- */

typedef struct mm_params {
  int64_t M, N, K;
  /* Output batch dims and, per batch dim, the element stride of A's and B's matrices
   * (0 where that operand is broadcast, so a broadcast operand is never copied). */
  int nb;
  int64_t batch[MM_MAX_BATCH];
  int64_t a_stride[MM_MAX_BATCH], b_stride[MM_MAX_BATCH];
  /* B has a single matrix: fold all of A's batches into the rows of one GEMM. */
  int fold;
  int relu;                     /* a following Relu fused as the GEMM's epilogue (absorb) */
  int half;                     /* WT_GEMM_A_HALF / WT_GEMM_B_HALF: float16 operands */
  /* A / B hold their matrices transposed ([K, M] / [N, K]): a Transpose swapping their last two
   * axes was folded into this step (read_swapped); M, N, K are the product's as before. */
  int ta, tb;
} mm_params;
static_assert(sizeof(mm_params) <= WT_PARAMS_MAX, "mm_params too large");

/* Operand i of a GEMM op: float, or float16 (sets its bit in *half). */
static int expect_float_or_half(const wt_tensor *t, const char *name, int i, int *half) {
  if (t->dtype == WT_FLOAT16) {
    *half |= i == 0 ? WT_GEMM_A_HALF : WT_GEMM_B_HALF;
    return WT_OK;
  }
  return wt_expect_float(t, name, i);
}

static int matmul_infer(wt_infer_ctx *ctx) {
  const wt_tensor *a = &ctx->in[0], *b = &ctx->in[1];
  int half = 0;
  WT_TRY(expect_float_or_half(a, "A", 0, &half));
  WT_TRY(expect_float_or_half(b, "B", 1, &half));
  if (a->rank < 1 || b->rank < 1)
    return wt_errorf(WT_ERR_SHAPE, "inputs have ranks %d and %d; MatMul needs rank >= 1 on both",
                     a->rank, b->rank);
  mm_params *p = WT_PARAMS(ctx, mm_params);
  memset(p, 0, sizeof *p);
  p->half = half;
  /* 1-D promotion: A [K] -> [1, K], B [K] -> [K, 1]; the added dim is dropped from Y. */
  int a1 = a->rank == 1, b1 = b->rank == 1;
  int64_t M = a1 ? 1 : a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  int64_t Kb = b1 ? b->dims[0] : b->dims[b->rank - 2], N = b1 ? 1 : b->dims[b->rank - 1];
  if (K != Kb) {
    char sa[96], sb[96];
    return wt_errorf(WT_ERR_SHAPE, "A %s and B %s: inner dimensions %lld and %lld differ",
                     wt_shape_str(a->rank, a->dims, sa, sizeof sa),
                     wt_shape_str(b->rank, b->dims, sb, sizeof sb), (long long)K, (long long)Kb);
  }
  int ra = a1 ? 0 : a->rank - 2, rb = b1 ? 0 : b->rank - 2;
  int nb = ra > rb ? ra : rb;
  int64_t a_mat = M * K, b_mat = K * N, a_acc = a_mat, b_acc = b_mat;
  /* Walk batch dims right to left, numpy-aligned. */
  for (int i = nb - 1; i >= 0; i--) {
    int ia = i - (nb - ra), ib = i - (nb - rb);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[96], sb[96];
      return wt_errorf(WT_ERR_SHAPE, "batch dimensions of A %s and B %s do not broadcast",
                       wt_shape_str(a->rank, a->dims, sa, sizeof sa),
                       wt_shape_str(b->rank, b->dims, sb, sizeof sb));
    }
    p->batch[i] = da == 1 ? db : da;
    p->a_stride[i] = da == 1 ? 0 : a_acc;
    p->b_stride[i] = db == 1 ? 0 : b_acc;
    a_acc *= da;
    b_acc *= db;
  }
  p->M = M;
  p->N = N;
  p->K = K;
  p->nb = nb;
  p->fold = b_acc == b_mat; /* B holds one matrix: A's batches are contiguous rows. */

  wt_tensor *y = &ctx->out[0];
  y->dtype = WT_FLOAT;
  y->rank = 0;
  for (int i = 0; i < nb; i++) y->dims[y->rank++] = p->batch[i];
  if (!a1) y->dims[y->rank++] = M;
  if (!b1) y->dims[y->rank++] = N;
  return WT_OK;
}

/* Batch t's matrices: t in mixed radix over the batch dims, each digit times its strides. */
static void matmul_offsets(const void *ctx, int64_t t, int64_t off[3]) {
  const mm_params *p = ctx;
  off[0] = off[1] = 0;
  off[2] = t * p->M * p->N;
  for (int i = p->nb - 1; i >= 0; i--) {
    int64_t d = t % p->batch[i];
    t /= p->batch[i];
    off[0] += d * p->a_stride[i];
    off[1] += d * p->b_stride[i];
  }
}

/* All of A's batches folded into the rows of one product (B holds one matrix, A is neither
 * broadcast nor stored transposed). */
static int matmul_folds(const mm_params *p, int64_t nbatch) {
  if (!p->fold || p->ta) return 0;
  int64_t a_batches = 1;
  for (int i = 0; i < p->nb; i++)
    if (p->a_stride[i]) a_batches *= p->batch[i];
  return a_batches == nbatch;
}

/* matmul_run with float16 operands: batch by batch (each product splits over threads itself). */
static void matmul_run_half(const mm_params *p, const void *A, const void *B, float *Y, int64_t nbatch) {
  int64_t M = p->M, N = p->N, K = p->K, lda = p->ta ? M : K, ldb = p->tb ? K : N;
  size_t ea = p->half & WT_GEMM_A_HALF ? 2 : 4, eb = p->half & WT_GEMM_B_HALF ? 2 : 4;
  if (matmul_folds(p, nbatch)) {
    gemm_product(p->half, 0, p->tb, nbatch * M, N, K, 1.0f, A, K, B, ldb, 0.0f, Y, N, p->relu);
    return;
  }
  for (int64_t t = 0; t < nbatch; t++) {
    int64_t off[3];
    matmul_offsets(p, t, off);
    wt_sgemm_half(p->half, p->ta, p->tb, M, N, K, 1.0f, (const char *)A + (size_t)off[0] * ea, lda,
                  (const char *)B + (size_t)off[1] * eb, ldb, 0.0f, Y + off[2], N, p->relu);
  }
}

static int matmul_run(const wt_run_ctx *ctx) {
  const mm_params *p = ctx->params;
  const float *A = ctx->in[0].data, *B = ctx->in[1].data;
  float *Y = ctx->out[0].data;
  int64_t M = p->M, N = p->N, K = p->K, nbatch = 1;
  for (int i = 0; i < p->nb; i++) nbatch *= p->batch[i];
  if (nbatch == 0 || M == 0 || N == 0) return WT_OK;
  if (K == 0) { /* Empty sums (ReLU of zeros is zeros); A and B may have no data at all. */
    memset(Y, 0, sizeof(float) * (size_t)(nbatch * M * N));
    return WT_OK;
  }
  if (p->half) {
    matmul_run_half(p, A, B, Y, nbatch);
    return WT_OK;
  }
  int64_t lda = p->ta ? M : K, ldb = p->tb ? K : N;
  if (matmul_folds(p, nbatch)) {
    gemm_product(0, 0, p->tb, nbatch * M, N, K, 1.0f, A, K, B, ldb, 0.0f, Y, N, p->relu);
    return WT_OK;
  }
  /* (When A is broadcast too, every batch is the same product, computed per batch.) */
  wt_sgemm_batch(p->ta, p->tb, nbatch, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, Y, N, p->relu,
                 matmul_offsets, p);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* Gemm(a, b) with beta = 0 (as ONNX Runtime emits it); before opset 11 C is required, so a zero
 * scalar stands in. */
static int emit_gemm(wt_grad_ctx *c, int a, int b, int ta, int tb, float alpha) {
  int zero = c->opset < 11 ? wt_grad_const_f32(c, 0.0f) : -1;
  int y = wt_grad_op1(c, "Gemm", "", zero >= 0 ? 3 : 2, (int[]){a, b, zero});
  if (y < 0) return -1;
  int n = wt_grad_last(c);
  wt_grad_attr_float(c, n, "beta", 0.0f);
  if (alpha != 1.0f) wt_grad_attr_float(c, n, "alpha", alpha);
  if (ta) wt_grad_attr_int(c, n, "transA", 1);
  if (tb) wt_grad_attr_int(c, n, "transB", 1);
  return y;
}

/* x with its last two axes swapped (x has the given rank). */
static int swap_last2(wt_grad_ctx *c, int x, int rank) {
  int64_t perm[WT_MAX_RANK];
  for (int i = 0; i < rank; i++) perm[i] = i;
  perm[rank - 1] = rank - 2;
  perm[rank - 2] = rank - 1;
  int t = wt_grad_op1(c, "Transpose", "", 1, &x);
  if (t >= 0) wt_grad_attr_ints(c, wt_grad_last(c), "perm", perm, rank);
  return t;
}

/* The int64 shape [-1, d], d = dim `axis` of value v (a constant when known, else read from
 * Shape(v) — folded at plan time). */
static int shape_m1(wt_grad_ctx *c, int v, int axis) {
  int64_t d = wt_grad_value(c, v)->dims[axis];
  if (d >= 0) return wt_grad_const_i64s(c, (int64_t[]){-1, d}, 2);
  int shape = wt_grad_op1(c, "Shape", "", 1, &v);
  int idx = wt_grad_const_i64s(c, (int64_t[]){axis}, 1);
  int dim = wt_grad_op1(c, "Gather", "", 2, (int[]){shape, idx});
  if (dim >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", 0);
  int m1 = wt_grad_const_i64s(c, (int64_t[]){-1}, 1);
  int r = wt_grad_op1(c, "Concat", "", 2, (int[]){m1, dim});
  if (r >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", 0);
  return r;
}

/* Batch axes (of the promoted output, nb batch dims) that input x (rank rx after promotion)
 * was broadcast along: its missing leading axes and its size-1 dims. The other operand's dims
 * (o, rank ro) settle symbolic dims. Returns the count, -1 when it cannot be told statically. */
static int mm_reduce_axes(const wt_value *x, int rx, const wt_value *o, int ro, int nb,
                          int64_t *axes) {
  int n = 0, lead = nb - (rx - 2), olead = nb - (ro - 2);
  for (int i = 0; i < nb; i++) {
    if (i < lead) {
      axes[n++] = i;
      continue;
    }
    int64_t d = x->dims[i - lead];
    int64_t od = i >= olead ? o->dims[i - olead] : 1;
    if (d == 1) {
      axes[n++] = i; /* a no-op when the output dim is 1 too */
    } else if (d < 0 && od != 1) {
      const char *s = wt_value_dim_param(x, i - lead), *t = i >= olead ? wt_value_dim_param(o, i - olead) : NULL;
      if (!(od < 0 && s && t && strcmp(s, t) == 0)) return -1;
    }
  }
  return n;
}

/* Gradient toward one MatMul operand in the general (promoted, batched) case: g is the
 * product before reduction, x the forward input. */
static int mm_finish(wt_grad_ctx *c, int g, int x, int rx, int promoted, int o, int ro, int nb) {
  int64_t axes[WT_MAX_RANK];
  int n = mm_reduce_axes(wt_grad_value(c, x), rx, wt_grad_value(c, o), ro, nb, axes);
  if (n < 0)
    return wt_grad_fail(c, WT_ERR_SHAPE, "cannot tell statically which batch dimensions of '%s' "
                        "are broadcast (symbolic dims)", wt_grad_value(c, x)->name), -1;
  if (n > 0) g = wt_grad_reduce_sum(c, g, axes, n, 1);
  if (promoted || nb > rx - 2) g = wt_grad_reshape_like(c, g, x);
  return g;
}

/* MatMul: dA = dY B^T, dB = A^T dY, with numpy's 1-D promotion and batch broadcasting undone.
 * 2-D x 2-D and N-D x 2-D (a weight) use Gemm on 2-D views, like ONNX Runtime. */
static int matmul_grad(wt_grad_ctx *c) {
  int A = I(0), B = I(1), dY = GO(0);
  int ra = wt_grad_value(c, A)->rank, rb = wt_grad_value(c, B)->rank;
  if (ra < 1 || rb < 1)
    return wt_grad_fail(c, WT_ERR_SHAPE, "the ranks of both inputs must be known");
  if (ra == 2 && rb == 2) {
    if (wt_grad_need(c, 0)) wt_grad_set(c, 0, emit_gemm(c, dY, B, 0, 1, 1.0f));
    if (wt_grad_need(c, 1)) wt_grad_set(c, 1, emit_gemm(c, A, dY, 1, 0, 1.0f));
    return wt_grad_status(c);
  }
  if (ra >= 3 && rb == 2) {
    int dy2 = wt_grad_op1(c, "Reshape", "", 2, (int[]){dY, shape_m1(c, B, 1)});
    if (wt_grad_need(c, 0))
      wt_grad_set(c, 0, wt_grad_reshape_like(c, emit_gemm(c, dy2, B, 0, 1, 1.0f), A));
    if (wt_grad_need(c, 1)) {
      int a2 = wt_grad_op1(c, "Reshape", "", 2, (int[]){A, shape_m1(c, B, 0)});
      wt_grad_set(c, 1, emit_gemm(c, a2, dy2, 1, 0, 1.0f));
    }
    return wt_grad_status(c);
  }
  /* Promote 1-D operands to matrices and dY to the matching rank. */
  int a1 = ra == 1, b1 = rb == 1;
  int pa = a1 ? wt_grad_unsqueeze(c, A, (int64_t[]){0}, 1) : A;
  int pb = b1 ? wt_grad_unsqueeze(c, B, (int64_t[]){1}, 1) : B;
  int rpa = a1 ? 2 : ra, rpb = b1 ? 2 : rb;
  int nb = (rpa > rpb ? rpa : rpb) - 2;
  int64_t yax[2];
  int ny = 0;
  if (a1) yax[ny++] = nb;
  if (b1) yax[ny++] = nb + 1;
  int dy = ny ? wt_grad_unsqueeze(c, dY, yax, ny) : dY;
  if (wt_grad_need(c, 0)) {
    int g = wt_grad_op1(c, "MatMul", "", 2, (int[]){dy, swap_last2(c, pb, rpb)});
    wt_grad_set(c, 0, mm_finish(c, g, A, rpa, a1, B, rpb, nb));
  }
  if (wt_grad_need(c, 1)) {
    int g = wt_grad_op1(c, "MatMul", "", 2, (int[]){swap_last2(c, pa, rpa), dy});
    wt_grad_set(c, 1, mm_finish(c, g, B, rpb, b1, A, rpa, nb));
  }
  return wt_grad_status(c);
}

/* A Relu after the product runs as the GEMM's epilogue (no pass of its own over the output). */
static int is_relu(const wt_node *n) {
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  return op && (op->flags & WT_OP_RELU);
}

static int matmul_absorb(void *params, const wt_node *next) {
  mm_params *p = params;
  if (p->relu || !is_relu(next)) return 0;
  return p->relu = 1;
}

/* Thin products (M or N below 4) are not fused: there wt_sgemm picks its path by the trans
 * flags, and one of them (dots_kernel) sums in another order. Elsewhere every path sums each
 * element's products in k order, so a fused step gives the plain one's bits. */
static int thin(int64_t M, int64_t N) { return M < 4 || N < 4; }

/* A or B stored transposed: the GEMM reads it through its trans flag (lda / ldb follow). */
static int matmul_read_swapped(void *params, int input, int rank, int commit) {
  mm_params *p = params;
  if (input > 1 || rank < 2 || (input ? p->tb : p->ta)) return 0;
  /* the rows of the product that runs: all of A's batches when they fold (B read swapped) */
  int64_t nbatch = 1;
  for (int i = 0; i < p->nb; i++) nbatch *= p->batch[i];
  if (thin(input == 1 && matmul_folds(p, nbatch) ? nbatch * p->M : p->M, p->N)) return 0;
  if (commit) *(input ? &p->tb : &p->ta) = 1;
  return 1;
}

static const wt_op_def wt_op_MatMul = {.domain = "", .op_type = "MatMul", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = matmul_infer, .grad = matmul_grad};

/* ---- Gemm ------------------------------------------------------------------------------- */

typedef struct gemm_params {
  int trans_a, trans_b;
  float alpha, beta;
  int64_t M, N, K;
  int has_c;
  /* C's element strides along Y's rows and columns (0 where broadcast). */
  int64_t c_rs, c_cs;
  int relu;                     /* a following Relu fused as the GEMM's epilogue (absorb) */
  int half;                     /* WT_GEMM_A_HALF / WT_GEMM_B_HALF: float16 operands */
  /* Y is written transposed, [N, M]: the Transpose after it was absorbed (gemm_absorb). */
  int trans_out;
} gemm_params;
static_assert(sizeof(gemm_params) <= WT_PARAMS_MAX, "gemm_params too large");

static int gemm_infer(wt_infer_ctx *ctx) {
  const wt_tensor *a = &ctx->in[0], *b = &ctx->in[1];
  int half = 0;
  WT_TRY(expect_float_or_half(a, "A", 0, &half));
  WT_TRY(expect_float_or_half(b, "B", 1, &half));
  int has_c = wt_has_input(ctx->in, ctx->n_in, 2);
  if (!has_c && ctx->opset < 11)
    return wt_errorf(WT_ERR_SHAPE, "input 'C' (index 2) is missing; it is optional only from opset 11");
  if (a->rank != 2 || b->rank != 2)
    return wt_errorf(WT_ERR_SHAPE, "inputs 'A' and 'B' have ranks %d and %d; expected rank 2",
                     a->rank, b->rank);
  gemm_params *p = WT_PARAMS(ctx, gemm_params);
  p->half = half;
  p->trans_a = wt_attr_int(ctx->node, "transA", 0) != 0;
  p->trans_b = wt_attr_int(ctx->node, "transB", 0) != 0;
  p->alpha = wt_attr_float(ctx->node, "alpha", 1.0f);
  p->beta = wt_attr_float(ctx->node, "beta", 1.0f);
  int64_t M = p->trans_a ? a->dims[1] : a->dims[0], K = p->trans_a ? a->dims[0] : a->dims[1];
  int64_t Kb = p->trans_b ? b->dims[1] : b->dims[0], N = p->trans_b ? b->dims[0] : b->dims[1];
  if (K != Kb) {
    char sa[64], sb[64];
    return wt_errorf(WT_ERR_SHAPE, "A %s (transA=%d) and B %s (transB=%d): inner dimensions %lld and %lld differ",
                     wt_shape_str(2, a->dims, sa, sizeof sa), p->trans_a,
                     wt_shape_str(2, b->dims, sb, sizeof sb), p->trans_b, (long long)K,
                     (long long)Kb);
  }
  p->M = M;
  p->N = N;
  p->K = K;
  p->has_c = has_c;
  if (has_c) {
    const wt_tensor *c = &ctx->in[2];
    WT_TRY(wt_expect_float(c, "C", 2));
    /* Unidirectional broadcast of C to [M, N] (opsets before 7 spelled this with the
     * 'broadcast' attribute; the same shapes are accepted). */
    int64_t cm = c->rank >= 2 ? c->dims[c->rank - 2] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    if (c->rank > 2 || (cm != 1 && cm != M) || (cn != 1 && cn != N)) {
      char sc[96];
      return wt_errorf(WT_ERR_SHAPE, "input 'C' (index 2) has shape %s; expected a shape that broadcasts to [%lld,%lld]",
                       wt_shape_str(c->rank, c->dims, sc, sizeof sc), (long long)M, (long long)N);
    }
    p->c_rs = cm == 1 ? 0 : cn;
    p->c_cs = cn == 1 ? 0 : 1;
  }
  int64_t dims[2] = {M, N};
  wt_set_shape(&ctx->out[0], WT_FLOAT, 2, dims);
  return WT_OK;
}

static int gemm_run(const wt_run_ctx *ctx) {
  const gemm_params *p = ctx->params;
  const float *A = ctx->in[0].data, *B = ctx->in[1].data;
  float *Y = ctx->out[0].data;
  int64_t M = p->M, N = p->N, K = p->K;
  if (M == 0 || N == 0) return WT_OK;
  float beta = 0.0f;
  if (p->has_c && p->beta != 0.0f) {
    /* Y starts as broadcast C; the kernel then computes alpha * AB + beta * Y in place. */
    const float *C = ctx->in[2].data;
    for (int64_t i = 0; i < M; i++) {
      const float *c = C + i * p->c_rs;
      float *y = Y + i * N;
      if (p->c_cs)
        memcpy(y, c, sizeof(float) * (size_t)N);
      else
        for (int64_t j = 0; j < N; j++) y[j] = c[0];
    }
    beta = p->beta;
  }
  int64_t lda = p->trans_a ? M : K, ldb = p->trans_b ? K : N;
  if (p->trans_out) {
    /* Y^T = op(B)^T op(A)^T: the same products summed in the same order, each landing at its
     * transposed place (no C: absorb refuses a Gemm that reads one). */
    int half = (p->half & WT_GEMM_A_HALF ? WT_GEMM_B_HALF : 0) | (p->half & WT_GEMM_B_HALF ? WT_GEMM_A_HALF : 0);
    gemm_product(half, !p->trans_b, !p->trans_a, N, M, K, p->alpha, B, ldb, A, lda, 0.0f, Y, M, p->relu);
    return WT_OK;
  }
  gemm_product(p->half, p->trans_a, p->trans_b, M, N, K, p->alpha, A, lda, B, ldb, beta, Y, N, p->relu);
  return WT_OK;
}

/* A transposing Transpose of the 2-D output: perm [1, 0] (or none: reversed). */
static int is_swap2(const wt_node *n) {
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op || !(op->flags & WT_OP_TRANSPOSE)) return 0;
  const int64_t *perm;
  int np = wt_attr_ints(n, "perm", &perm);
  return np < 0 || (np == 2 && perm[0] == 1 && perm[1] == 0);
}

static int gemm_absorb(void *params, const wt_node *next) {
  gemm_params *p = params;
  if (p->relu || p->trans_out) return 0;
  if (is_relu(next)) return p->relu = 1;
  if (!is_swap2(next) || (p->has_c && p->beta != 0.0f) || thin(p->M, p->N)) return 0;
  return p->trans_out = 1;
}

static int gemm_read_swapped(void *params, int input, int rank, int commit) {
  gemm_params *p = params;
  if (input > 1 || rank != 2 || thin(p->M, p->N)) return 0;
  if (commit) *(input ? &p->trans_b : &p->trans_a) ^= 1;
  return 1;
}

/* Gemm: the four transA/transB cases as ONNX Runtime emits them (Gemm nodes with alpha,
 * beta = 0); dC = beta * dY summed over C's broadcast axes. */
static int gemm_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  int ta = wt_attr_int(n, "transA", 0) != 0, tb = wt_attr_int(n, "transB", 0) != 0;
  float alpha = wt_attr_float(n, "alpha", 1.0f), beta = wt_attr_float(n, "beta", 1.0f);
  int A = I(0), B = I(1), dY = GO(0);
  if (wt_grad_need(c, 0)) {
    int d = ta ? emit_gemm(c, B, dY, tb, 1, alpha) : emit_gemm(c, dY, B, 0, !tb, alpha);
    wt_grad_set(c, 0, d);
  }
  if (wt_grad_need(c, 1)) {
    int d = tb ? emit_gemm(c, dY, A, 1, ta, alpha) : emit_gemm(c, A, dY, !ta, 0, alpha);
    wt_grad_set(c, 1, d);
  }
  if (wt_grad_need(c, 2)) {
    int d = wt_grad_unbroadcast(c, dY, 0, 2);
    if (beta != 1.0f) d = wt_grad_op1(c, "Mul", "", 2, (int[]){d, wt_grad_const_f32(c, beta)});
    wt_grad_set(c, 2, d);
  }
  return wt_grad_status(c);
}

static const wt_op_def wt_op_Gemm = {.domain = "", .op_type = "Gemm", .min_inputs = 2, .max_inputs = 3,
                              .min_outputs = 1, .max_outputs = 1, .infer = gemm_infer, .grad = gemm_grad};

const wt_op_def *const wt_ops_gemm[] = {
    &wt_op_Gemm,
    &wt_op_MatMul,
    NULL,
};

const wt_cpu_kernel wt_cpu_kernels_gemm[] = {
    {.key = {"", "MatMul"}, .run = matmul_run, .absorb = matmul_absorb, .read_swapped = matmul_read_swapped, .half_inputs = 0x3},
    {.key = {"", "Gemm"}, .run = gemm_run, .absorb = gemm_absorb, .read_swapped = gemm_read_swapped, .half_inputs = 0x3},
    WT_CPU_KERNELS_END};
