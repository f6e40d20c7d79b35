/* The CPU kernels of the einsum family (definitions: src/ops/einsum.c): a batched GEMM where
 * the equation is a product, else the generic strided loop. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "backend/cpu/einsum.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/kernel.h"
#include "ops/einsum_params.h"
#include "ops/op.h"

/* Element strides of every compact id in operand k (0: absent or broadcast). */
static void op_strides(const es_params *p, const wt_tensor *t, int k, int64_t *st) {
  int64_t rs[WT_MAX_RANK];
  wt_strides(t->rank, t->dims, rs);
  for (int c = 0; c < WT_EINSUM_MAX_IDS; c++) st[c] = 0;
  for (int i = 0; i < p->op_rank[k]; i++)
    if (t->dims[i] != 1 || p->dims[(int)p->op_ids[k][i]] == 1) st[(int)p->op_ids[k][i]] += rs[i];
}

static void gather_layout(const es_params *p, const int64_t *st, const int8_t *g1, int n1,
                          const int8_t *g2, int n2, const int8_t *g3, int n3, int64_t *dims,
                          int64_t *strides, int *rank) {
  int r = 0;
  const int8_t *gs[3] = {g1, g2, g3};
  int ns[3] = {n1, n2, n3};
  for (int g = 0; g < 3; g++)
    for (int i = 0; i < ns[g]; i++) {
      dims[r] = p->dims[(int)gs[g][i]];
      strides[r++] = st[(int)gs[g][i]];
    }
  *rank = r;
}

/* Batch t of the [B, M, K] x [B, K, N] products, all laid out contiguously. */
static void einsum_offsets(const void *ctx, int64_t t, int64_t off[3]) {
  const es_params *p = ctx;
  off[0] = t * p->m * p->k;
  off[1] = t * p->k * p->n;
  off[2] = t * p->m * p->n;
}

static int es_run(const wt_run_ctx *ctx) {
  const es_params *p = ctx->params;
  int64_t st[WT_EINSUM_MAX_OPS][WT_EINSUM_MAX_IDS];
  for (int k = 0; k < p->n_ops; k++) op_strides(p, &ctx->in[k], k, st[k]);
  if (!p->gemm) {
    const void *ops[WT_EINSUM_MAX_OPS];
    for (int k = 0; k < p->n_ops; k++) ops[k] = ctx->in[k].data;
    wt_einsum_generic(p->dtype, p->n_ops, ops, (const int64_t(*)[WT_EINSUM_MAX_IDS])st, p->n_ids,
                      p->n_out, p->dims, ctx->out[0].data);
    return WT_OK;
  }
  int64_t dims[WT_EINSUM_MAX_IDS], strides[WT_EINSUM_MAX_IDS];
  int r;
  const float *a = ctx->in[0].data, *b = ctx->in[1].data;
  unsigned char *scr = ctx->scratch;
  if (p->copy_a) {
    gather_layout(p, st[0], p->b_ids, p->nb_ids, p->m_ids, p->nm_ids, p->k_ids, p->nk_ids, dims,
                  strides, &r);
    wt_strided_copy_f32(a, r, dims, strides, (float *)scr);
    a = (const float *)scr;
  }
  if (p->copy_b) {
    gather_layout(p, st[1], p->b_ids, p->nb_ids, p->k_ids, p->nk_ids, p->n_ids_, p->nn_ids, dims,
                  strides, &r);
    wt_strided_copy_f32(b, r, dims, strides, (float *)(scr + p->off_b));
    b = (const float *)(scr + p->off_b);
  }
  float *c = p->copy_c ? (float *)(scr + p->off_c) : ctx->out[0].data;
  int64_t m = p->m, n = p->n, k = p->k;
  wt_sgemm_batch(p->trans_a, p->trans_b, p->nb, m, n, k, 1.0f, a, p->trans_a ? m : k, b,
                 p->trans_b ? k : n, 0.0f, c, n, 0, einsum_offsets, p);
  if (p->copy_c) {
    /* C is [B, M, N]; the output walks its ids in output order (compact ids 0..n_out-1). */
    int64_t cst[WT_EINSUM_MAX_IDS] = {0}, s = 1;
    const int8_t *gs[3] = {p->n_ids_, p->m_ids, p->b_ids};
    int ns[3] = {p->nn_ids, p->nm_ids, p->nb_ids};
    for (int g = 0; g < 3; g++)
      for (int i = ns[g] - 1; i >= 0; i--) {
        cst[(int)gs[g][i]] = s;
        s *= p->dims[(int)gs[g][i]];
      }
    for (int i = 0; i < p->n_out; i++) {
      dims[i] = p->dims[i];
      strides[i] = cst[i];
    }
    wt_strided_copy_f32(c, p->n_out, dims, strides, ctx->out[0].data);
  }
  return WT_OK;
}

/* The copies of the operands (and result) not in a GEMM's layout, one after the other. */
static size_t es_scratch(const wt_infer_ctx *ctx) {
  es_params *p = ctx->params;
  if (!p->gemm) return 0;
  size_t sa = p->copy_a ? (size_t)(p->nb * p->m * p->k) * sizeof(float) : 0;
  size_t sb = p->copy_b ? (size_t)(p->nb * p->k * p->n) * sizeof(float) : 0;
  size_t sc = p->copy_c ? (size_t)(p->nb * p->m * p->n) * sizeof(float) : 0;
  sa = (sa + 63) & ~(size_t)63;
  sb = (sb + 63) & ~(size_t)63;
  p->off_b = sa;
  p->off_c = sa + sb;
  return sa + sb + sc;
}

const wt_cpu_kernel wt_cpu_kernels_einsum[] = {
    {.key = {"", "Einsum"}, .run = es_run, .scratch = es_scratch},
    WT_CPU_KERNELS_END};
