/* Op family: gemm. MatMul (numpy matmul: 1-D promotion, broadcast batch dims) and Gemm
 * (Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to [M, N]).
 * Both run on wt_sgemm; float32 only. */
#include <assert.h>
#include <string.h>

#include "kernels/gemm.h"
#include "ops/op.h"

#define MM_MAX_BATCH (WT_MAX_RANK - 1)

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
} mm_params;
static_assert(sizeof(mm_params) <= WT_PARAMS_MAX, "mm_params too large");

static int check_float(const wt_tensor *t, const char *name, int index) {
  if (t->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_UNSUPPORTED, "input '%s' (index %d) has dtype %s; only float is supported",
                     name, index, wt_dtype_name(t->dtype));
  return WT_OK;
}

static int matmul_infer(wt_infer_ctx *ctx) {
  const wt_tensor *a = &ctx->in[0], *b = &ctx->in[1];
  WT_TRY(check_float(a, "A", 0));
  WT_TRY(check_float(b, "B", 1));
  if (a->rank < 1 || b->rank < 1)
    return wt_errorf(WT_ERR_SHAPE, "inputs have ranks %d and %d; MatMul needs rank >= 1 on both",
                     a->rank, b->rank);
  mm_params *p = ctx->params;
  memset(p, 0, sizeof *p);
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

static int matmul_run(const wt_run_ctx *ctx) {
  const mm_params *p = ctx->params;
  const float *A = ctx->in[0].data, *B = ctx->in[1].data;
  float *Y = ctx->out[0].data;
  int64_t M = p->M, N = p->N, K = p->K, nbatch = 1;
  for (int i = 0; i < p->nb; i++) nbatch *= p->batch[i];
  if (nbatch == 0 || M == 0 || N == 0) return WT_OK;
  if (K == 0) { /* Empty sums; A and B may have no data at all. */
    memset(Y, 0, sizeof(float) * (size_t)(nbatch * M * N));
    return WT_OK;
  }
  if (p->fold) {
    /* When A is broadcast too (all batch strides 0) every batch is the same product. */
    int64_t a_batches = 1;
    for (int i = 0; i < p->nb; i++)
      if (p->a_stride[i]) a_batches *= p->batch[i];
    if (a_batches == nbatch) {
      wt_sgemm(0, 0, nbatch * M, N, K, 1.0f, A, K, B, N, 0.0f, Y, N);
      return WT_OK;
    }
  }
  int64_t idx[MM_MAX_BATCH] = {0};
  int64_t aoff = 0, boff = 0;
  for (int64_t t = 0; t < nbatch; t++) {
    wt_sgemm(0, 0, M, N, K, 1.0f, A + aoff, K, B + boff, N, 0.0f, Y + t * M * N, N);
    /* Odometer increment over the batch dims, adjusting both operand offsets. */
    for (int i = p->nb - 1; i >= 0; i--) {
      aoff += p->a_stride[i];
      boff += p->b_stride[i];
      if (++idx[i] < p->batch[i]) break;
      aoff -= p->a_stride[i] * p->batch[i];
      boff -= p->b_stride[i] * p->batch[i];
      idx[i] = 0;
    }
  }
  return WT_OK;
}

const wt_op_def wt_op_MatMul = {.domain = "", .op_type = "MatMul", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = matmul_infer, .run = matmul_run};

/* ---- Gemm ------------------------------------------------------------------------------- */

typedef struct gemm_params {
  int trans_a, trans_b;
  float alpha, beta;
  int64_t M, N, K;
  int has_c;
  /* C's element strides along Y's rows and columns (0 where broadcast). */
  int64_t c_rs, c_cs;
} gemm_params;
static_assert(sizeof(gemm_params) <= WT_PARAMS_MAX, "gemm_params too large");

static int gemm_infer(wt_infer_ctx *ctx) {
  const wt_tensor *a = &ctx->in[0], *b = &ctx->in[1];
  WT_TRY(check_float(a, "A", 0));
  WT_TRY(check_float(b, "B", 1));
  int has_c = wt_has_input(ctx->in, ctx->n_in, 2);
  if (!has_c && ctx->opset < 11)
    return wt_errorf(WT_ERR_SHAPE, "input 'C' (index 2) is missing; it is optional only from opset 11");
  if (a->rank != 2 || b->rank != 2)
    return wt_errorf(WT_ERR_SHAPE, "inputs 'A' and 'B' have ranks %d and %d; expected rank 2",
                     a->rank, b->rank);
  gemm_params *p = ctx->params;
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
    WT_TRY(check_float(c, "C", 2));
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
  wt_sgemm(p->trans_a, p->trans_b, M, N, K, p->alpha, A, lda, B, ldb, beta, Y, N);
  return WT_OK;
}

const wt_op_def wt_op_Gemm = {.domain = "", .op_type = "Gemm", .min_inputs = 2, .max_inputs = 3,
                              .min_outputs = 1, .max_outputs = 1, .infer = gemm_infer,
                              .run = gemm_run};

const wt_op_def *const wt_ops_gemm[] = {
    &wt_op_Gemm,
    &wt_op_MatMul,
    NULL,
};
