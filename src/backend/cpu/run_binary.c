/* The CPU kernels of the binary family (definitions: src/ops/binary.c): broadcast arithmetic,
 * comparison, logic, Where, and DivGrad. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/elementwise.h"
#include "backend/cpu/kernel.h"
#include "ops/binary_ops.h"
#include "ops/op.h"

/* The broadcast iteration takes every rank a tensor can have. */
static_assert(WT_BCAST_MAX_RANK >= WT_MAX_RANK, "broadcast rank below the tensor rank");

/* ---- rows ---------------------------------------------------------------------------------- */

typedef struct row_user {
  int op;
  int da, db;         /* operand dtypes (Pow may mix) */
} row_user;

static int64_t load_i(const void *p, int dtype, int64_t i) {
  return dtype == WT_INT32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* Pow with different base and exponent types: computed in double, stored as the base type. */
static void pow_mixed(const row_user *u, int64_t n, const void *a, int sa, const void *b, int sb,
                      void *out) {
  for (int64_t i = 0; i < n; i++) {
    if (u->da == WT_FLOAT) {
      ((float *)out)[i] = (float)pow(dt_load_d(a, u->da, i * sa), dt_load_d(b, u->db, i * sb));
    } else if (u->db != WT_FLOAT) {
      int64_t r = wt_ew_ipow(load_i(a, u->da, i * sa), load_i(b, u->db, i * sb));
      if (u->da == WT_INT32) ((int32_t *)out)[i] = (int32_t)r;
      else ((int64_t *)out)[i] = r;
    } else {
      double r = pow(dt_load_d(a, u->da, i * sa), dt_load_d(b, u->db, i * sb));
      if (u->da == WT_INT32) ((int32_t *)out)[i] = (int32_t)dt_sat_i64(r, INT32_MIN, INT32_MAX);
      else ((int64_t *)out)[i] = dt_sat_i64(r, INT64_MIN, INT64_MAX);
    }
  }
}

static int arith_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  const row_user *u = user;
  if (u->da != u->db) {
    pow_mixed(u, n, p[0], st[0], p[1], st[1], out);
    return 0;
  }
  switch (u->da) {
    case WT_FLOAT: wt_ew_binary_f32(u->op, n, p[0], st[0], p[1], st[1], out); return 0;
    case WT_INT32: return wt_ew_binary_i32(u->op, n, p[0], st[0], p[1], st[1], out);
    default: return wt_ew_binary_i64(u->op, n, p[0], st[0], p[1], st[1], out);
  }
}

static int cmp_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  const row_user *u = user;
  switch (u->da) {
    case WT_FLOAT: wt_ew_compare_f32(u->op, n, p[0], st[0], p[1], st[1], out); break;
    case WT_INT32: wt_ew_compare_i32(u->op, n, p[0], st[0], p[1], st[1], out); break;
    case WT_INT64: wt_ew_compare_i64(u->op, n, p[0], st[0], p[1], st[1], out); break;
    default: wt_ew_compare_bool(u->op, n, p[0], st[0], p[1], st[1], out); break;
  }
  return 0;
}

static int logic_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  const row_user *u = user;
  wt_ew_logic(u->op, n, p[0], st[0], p[1], st[1], out);
  return 0;
}

#define WHERE_LOOP(T)                                              \
  do {                                                             \
    const T *x = p[1], *y = p[2];                                  \
    T *o = out;                                                    \
    for (int64_t i = 0; i < n; i++) o[i] = c[i * st[0]] ? x[i * st[1]] : y[i * st[2]]; \
  } while (0)

static int where_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  const row_user *u = user;
  const uint8_t *c = p[0];
  switch (wt_dtype_size(u->da)) {
    case 1: WHERE_LOOP(uint8_t); break;
    case 4: WHERE_LOOP(uint32_t); break;
    default: WHERE_LOOP(uint64_t); break;
  }
  return 0;
}

static int run_bcast(const wt_tensor *const *ts, int n, const wt_tensor *out, wt_bcast_row_fn fn,
                     row_user *u) {
  int ranks[WT_BCAST_MAX_IN];
  const int64_t *dims[WT_BCAST_MAX_IN];
  const void *ptrs[WT_BCAST_MAX_IN];
  size_t es[WT_BCAST_MAX_IN];
  for (int k = 0; k < n; k++) {
    ranks[k] = ts[k]->rank;
    dims[k] = ts[k]->dims;
    ptrs[k] = ts[k]->data;
    es[k] = wt_dtype_size(ts[k]->dtype);
  }
  wt_bcast plan;
  wt_bcast_init(&plan, out->rank, out->dims, n, ranks, dims);
  return wt_bcast_run_pool(&plan, ptrs, es, out->data, wt_dtype_size(out->dtype), fn, u);
}

static int run(const wt_run_ctx *ctx) {
  const bin_params *p = ctx->params;
  const wt_tensor *out = &ctx->out[0];
  row_user u = {.op = p->op, .da = ctx->in[0].dtype, .db = ctx->in[ctx->n_in > 1].dtype};
  if (p->kind == K_WHERE) {
    const wt_tensor *ts[3] = {&ctx->in[0], &ctx->in[1], &ctx->in[2]};
    u.da = ctx->in[1].dtype;
    return run_bcast(ts, 3, out, where_row, &u);
  }
  if (ctx->n_in == 1) { /* single-input Min/Max/Sum/Mean: a copy */
    if (out->data != ctx->in[0].data) memmove(out->data, ctx->in[0].data, wt_nbytes(out));
    return WT_OK;
  }
  wt_bcast_row_fn fn = p->kind == K_CMP ? cmp_row : p->kind == K_LOGIC ? logic_row : arith_row;
  const wt_tensor *ts[2] = {&ctx->in[0], &ctx->in[1]};
  int rc = run_bcast(ts, 2, out, fn, &u);
  /* Variadic Min/Max fold the remaining inputs into the (full-shape) output in place. */
  for (int k = 2; k < ctx->n_in && rc == 0; k++) {
    const wt_tensor *tk[2] = {out, &ctx->in[k]};
    rc = run_bcast(tk, 2, out, fn, &u);
  }
  if (rc == 0 && p->mean) {
    float count = (float)ctx->n_in;
    wt_ew_binary_f32(WT_EW_DIV, wt_numel(out), out->data, 1, &count, 0, out->data);
  }
  if (rc)
    return wt_errorf(WT_ERR_RUNTIME, "integer %s by zero (a zero in the divisor input)", ctx->node->op_type);
  return WT_OK;
}

static int div_grad_run(const wt_run_ctx *ctx) {
  const wt_tensor *dy = &ctx->in[0], *a = &ctx->in[1], *b = &ctx->in[2];
  int ranks[3] = {dy->rank, a->rank, b->rank};
  const int64_t *dims[3] = {dy->dims, a->dims, b->dims};
  wt_bcast plan;
  wt_bcast_init(&plan, dy->rank, dy->dims, 3, ranks, dims);
  float *da = ctx->node->outputs[0] >= 0 ? ctx->out[0].data : NULL;
  float *db = ctx->n_out > 1 && ctx->node->outputs[1] >= 0 ? ctx->out[1].data : NULL;
  wt_ew_div_grad_f32(&plan, dy->data, a->data, b->data, da, wt_numel(a), db, wt_numel(b));
  return WT_OK;
}

#define BIN_KERNEL(NAME, ...) {.key = {"", #NAME}, .run = run},
const wt_cpu_kernel wt_cpu_kernels_binary[] = {
    BINARY_OPS(BIN_KERNEL){.key = {"com.microsoft", "DivGrad"}, .run = div_grad_run},
    WT_CPU_KERNELS_END};
