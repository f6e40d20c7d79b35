/* Op family: gemm. MatMul (numpy matmul: 1-D promotion, broadcast batch dims) and Gemm
 * (Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to [M, N]).
 * Both run on wt_sgemm; float32, with A and B also float16 (frozen weights reached through a Cast
 * the shape pass skips: wt_sgemm_half widens them while packing). Gradient rules emit Gemm on 2-D views (like ONNX Runtime)
 * or MatMul + Transpose + ReduceSum for batched / broadcast / 1-D operands. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/gemm_params.h"

/* ---- MatMul ----------------------------------------------------------------------------- */

/* Operand i of a GEMM op: float, or float16 (sets its bit in *half). */
static int expect_float_or_half(const wt_tensor *t, const char *name, int i, int *half) {
  if (t->dtype == WT_FLOAT16) {
    *half |= i == 0 ? WT_MM_HALF_A : WT_MM_HALF_B;
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

static const wt_op_def wt_op_MatMul = {.domain = "", .op_type = "MatMul", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = matmul_infer, .grad = matmul_grad};

/* ---- Gemm ------------------------------------------------------------------------------- */

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
