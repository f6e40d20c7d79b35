/* Op family: binary elementwise ops with numpy broadcasting — arithmetic (Add Sub Mul Div Pow
 * Mod PRelu), variadic Min/Max/Sum/Mean, comparisons (Equal Less Greater LessOrEqual GreaterOrEqual), logic
 * (And Or Xor) and Where; their gradient rules, and com.microsoft DivGrad. The broadcast walk
 * and row kernels live in backend/cpu/elementwise.c (DivGrad's in backend/cpu/elementwise_grad.c). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "grad/grad.h"
#include "backend/cpu/elementwise.h"
#include "ops/dtype_set.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"

enum { K_ARITH, K_MEAN /* Sum, then divided by the input count */, K_CMP, K_LOGIC, K_WHERE };

/* The family's ops: one line each, the single source of their definitions (with their spec)
 * and the family table. X(Name, kind, kernel op, dtypes of the data inputs, min_in, max_in,
 * gradient rule or NULL) */
#define BINARY_OPS(X)                                            \
  X(Add, K_ARITH, WT_EW_ADD, DT_NUM, 2, 2, add_grad)             \
  X(Sub, K_ARITH, WT_EW_SUB, DT_NUM, 2, 2, sub_grad)             \
  X(Mul, K_ARITH, WT_EW_MUL, DT_NUM, 2, 2, mul_grad)             \
  X(Div, K_ARITH, WT_EW_DIV, DT_NUM, 2, 2, div_grad)             \
  X(Pow, K_ARITH, WT_EW_POW, DT_NUM, 2, 2, pow_grad)             \
  X(Mod, K_ARITH, WT_EW_MOD, DT_NUM, 2, 2, NULL)                 \
  X(Min, K_ARITH, WT_EW_MIN, DT_NUM, 1, 64, min_max_grad)        \
  X(Max, K_ARITH, WT_EW_MAX, DT_NUM, 1, 64, min_max_grad)        \
  X(Sum, K_ARITH, WT_EW_ADD, DT_F, 1, 64, sum_grad)              \
  X(Mean, K_MEAN, WT_EW_ADD, DT_F, 1, 64, mean_grad)             \
  X(PRelu, K_ARITH, WT_EW_PRELU, DT_NUM, 2, 2, prelu_grad)       \
  X(Equal, K_CMP, WT_EW_EQ, DT_NUM | DT_B, 2, 2, NULL)           \
  X(Less, K_CMP, WT_EW_LT, DT_NUM, 2, 2, NULL)                   \
  X(Greater, K_CMP, WT_EW_GT, DT_NUM, 2, 2, NULL)                \
  X(LessOrEqual, K_CMP, WT_EW_LE, DT_NUM, 2, 2, NULL)            \
  X(GreaterOrEqual, K_CMP, WT_EW_GE, DT_NUM, 2, 2, NULL)         \
  X(And, K_LOGIC, WT_EW_AND, DT_B, 2, 2, NULL)                   \
  X(Or, K_LOGIC, WT_EW_OR, DT_B, 2, 2, NULL)                     \
  X(Xor, K_LOGIC, WT_EW_XOR, DT_B, 2, 2, NULL)                   \
  X(Where, K_WHERE, 0, DT_NUM | DT_B, 3, 3, where_grad)

typedef struct bin_spec {
  int kind;
  int op;            /* wt_ew_binop / wt_ew_cmpop / wt_ew_logicop */
  unsigned dtypes;   /* allowed dtypes of the (first) data input */
} bin_spec;

typedef struct bin_params {
  int kind;
  int op;
  int mean;  /* Mean: Sum, then divide by the input count */
} bin_params;
static_assert(sizeof(bin_params) <= WT_PARAMS_MAX, "params too large");

static int check_dtype(const wt_tensor *t, int i, unsigned allowed) {
  if (dt_bit(t->dtype) & allowed) return WT_OK;
  return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s; expected %s", i,
                   wt_dtype_name(t->dtype), dt_list(allowed));
}

static int infer(wt_infer_ctx *ctx) {
  const bin_spec *s = ctx->op->spec;
  if (ctx->opset < 7 && wt_node_attr(ctx->node, "broadcast"))
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "legacy 'broadcast'/'axis' attributes (opset < 7) are not supported");
  bin_params *p = WT_PARAMS(ctx, bin_params);
  p->kind = s->kind == K_MEAN ? K_ARITH : s->kind;
  p->op = s->op;
  p->mean = s->kind == K_MEAN;
  if (s->op == WT_EW_PRELU && ctx->opset < 16 && ctx->in[0].dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has dtype %s; expected float before opset 16",
                     wt_dtype_name(ctx->in[0].dtype));
  int out_dtype = ctx->in[0].dtype;
  if (s->kind == K_WHERE) {
    WT_TRY(wt_expect_dtype(&ctx->in[0], "condition", 0, WT_BOOL));
    WT_TRY(check_dtype(&ctx->in[1], 1, s->dtypes));
    if (ctx->in[2].dtype != ctx->in[1].dtype)
      return wt_errorf(WT_ERR_SHAPE, "inputs 'X' and 'Y' have dtypes %s and %s; expected the same",
                       wt_dtype_name(ctx->in[1].dtype), wt_dtype_name(ctx->in[2].dtype));
    out_dtype = ctx->in[1].dtype;
  } else {
    for (int i = 0; i < ctx->n_in; i++) {
      if (!wt_has_input(ctx->in, ctx->n_in, i))
        return wt_errorf(WT_ERR_INVALID_ARG, "input %d is missing", i);
      WT_TRY(check_dtype(&ctx->in[i], i, s->dtypes));
      /* Pow's exponent (T1) may differ from the base type; everything else is homogeneous. */
      if (i > 0 && ctx->in[i].dtype != ctx->in[0].dtype && s->op != WT_EW_POW)
        return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s but input 0 has %s; expected the same",
                         i, wt_dtype_name(ctx->in[i].dtype), wt_dtype_name(ctx->in[0].dtype));
    }
    if (s->kind == K_CMP) out_dtype = WT_BOOL;
    if (s->op == WT_EW_MOD) {
      int fmod = (int)wt_attr_int(ctx->node, "fmod", 0);
      if (fmod != 0 && fmod != 1)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'fmod' is %d; expected 0 or 1", fmod);
      if (!fmod && ctx->in[0].dtype == WT_FLOAT)
        return wt_errorf(WT_ERR_INVALID_ARG, "float Mod requires attribute fmod=1");
      p->op = fmod ? WT_EW_FMOD : WT_EW_MOD;
    }
  }
  const wt_tensor *ts[64];
  if (ctx->n_in > (int)(sizeof ts / sizeof ts[0]))
    return wt_errorf(WT_ERR_UNSUPPORTED, "%d inputs; at most %d supported", ctx->n_in,
                     (int)(sizeof ts / sizeof ts[0]));
  for (int i = 0; i < ctx->n_in; i++) ts[i] = &ctx->in[i];
  int rank;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(wt_broadcast_shapes(ctx->n_in, ts, &rank, dims));
  if (s->op == WT_EW_PRELU && (rank != ctx->in[0].rank ||
                               wt_shape_numel(rank, dims) != wt_numel(&ctx->in[0]))) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "input 'slope' (index 1) has shape %s; expected a shape that broadcasts to X's %s",
                     wt_shape_str(ctx->in[1].rank, ctx->in[1].dims, b, sizeof b),
                     wt_shape_str(ctx->in[0].rank, ctx->in[0].dims, a, sizeof a));
  }
  wt_set_shape(&ctx->out[0], out_dtype, rank, dims);
  return WT_OK;
}

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

/* ---- gradient rules --------------------------------------------------------------------- */

/* dA = unbroadcast(dY), dB = unbroadcast(+-dY) */
static int add_sub_grad(wt_grad_ctx *c, int negate_b) {
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, wt_grad_unbroadcast(c, GO(0), 0, 0));
  if (wt_grad_need(c, 1)) {
    int d = negate_b ? wt_grad_op1(c, "Neg", "", 1, (int[]){GO(0)}) : GO(0);
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, d, 0, 1));
  }
  return wt_grad_status(c);
}
static int add_grad(wt_grad_ctx *c) { return add_sub_grad(c, 0); }
static int sub_grad(wt_grad_ctx *c) { return add_sub_grad(c, 1); }

/* dA = unbroadcast(dY * B), dB = unbroadcast(dY * A) */
static int mul_grad(wt_grad_ctx *c) {
  for (int i = 0; i < 2; i++) {
    if (!wt_grad_need(c, i)) continue;
    int d = wt_grad_op1(c, "Mul", "", 2, (int[]){GO(0), I(1 - i)});
    wt_grad_set(c, i, wt_grad_unbroadcast(c, d, 0, i));
  }
  return wt_grad_status(c);
}

/* Sum(x0..xn): every input gets dY (unbroadcast). */
static int sum_grad(wt_grad_ctx *c) {
  for (int i = 0; i < wt_grad_node(c)->n_inputs; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_unbroadcast(c, GO(0), 0, i));
  return wt_grad_status(c);
}


/* Div: ONNX Runtime's DivGrad(dY, A, B) -> (dA, dB) when B needs a gradient (dA is then
 * computed even if unused, as in ONNX Runtime); dA = unbroadcast(dY / B) alone otherwise. */
static int div_grad(wt_grad_ctx *c) {
  if (!wt_grad_need(c, 1)) {
    wt_grad_set(c, 0, wt_grad_unbroadcast(c, wt_grad_op2(c, "Div", GO(0), I(1)), 0, 0));
    return wt_grad_status(c);
  }
  int outs[2];
  if (wt_grad_op(c, "DivGrad", WT_MS, 3, (int[]){GO(0), I(0), I(1)}, 2, outs) < 0)
    return wt_grad_status(c);
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, outs[0]);
  wt_grad_set(c, 1, outs[1]);
  return wt_grad_status(c);
}

/* Pow: dA = dY * B * A^(B - 1) (ONNX Runtime's); dB = dY * Y * log(A), taken as 0 where A == 0
 * (as PyTorch); meaningful for A > 0. An integer exponent is cast to float first. */
static int pow_grad(wt_grad_ctx *c) {
  int e = I(1);
  if (wt_grad_value(c, e)->dtype != WT_FLOAT) {
    e = wt_grad_op1(c, "Cast", "", 1, &e);
    if (e >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  }
  if (wt_grad_need(c, 0)) {
    int p = wt_grad_op2(c, "Pow", I(0), wt_grad_op2(c, "Sub", e, wt_grad_const_f32(c, 1.0f)));
    int d = wt_grad_op2(c, "Mul", GO(0), wt_grad_op2(c, "Mul", e, p));
    wt_grad_set(c, 0, wt_grad_unbroadcast(c, d, 0, 0));
  }
  if (wt_grad_need(c, 1)) {
    int zero = wt_grad_const_f32(c, 0.0f);
    int ylog = wt_grad_op2(c, "Mul", O(0), wt_grad_op1(c, "Log", "", 1, (int[]){I(0)}));
    int safe = wt_grad_op1(c, "Where", "", 3, (int[]){wt_grad_op2(c, "Equal", I(0), zero), zero, ylog});
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, wt_grad_op2(c, "Mul", GO(0), safe), 0, 1));
  }
  return wt_grad_status(c);
}

/* Min / Max (ONNX Runtime's rule): input i gets dY * [x_i == y] / #{j : x_j == y}, so ties
 * share the gradient equally. */
static int min_max_grad(wt_grad_ctx *c) {
  int n = wt_grad_node(c)->n_inputs;
  if (n == 1) {
    wt_grad_set(c, 0, GO(0));
    return wt_grad_status(c);
  }
  int masks[64];
  for (int i = 0; i < n; i++) {
    int eq = wt_grad_op2(c, "Equal", I(i), O(0));
    masks[i] = wt_grad_op1(c, "Cast", "", 1, &eq);
    if (masks[i] >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  }
  if (wt_grad_status(c)) return wt_grad_status(c);
  int count = wt_grad_op1(c, "Sum", "", n, masks);
  int scaled = wt_grad_op2(c, "Div", GO(0), count);
  for (int i = 0; i < n; i++)
    if (wt_grad_need(c, i))
      wt_grad_set(c, i, wt_grad_unbroadcast(c, wt_grad_op2(c, "Mul", scaled, masks[i]), 0, i));
  return wt_grad_status(c);
}

/* Mean: every input gets dY / n (unbroadcast). */
static int mean_grad(wt_grad_ctx *c) {
  int n = wt_grad_node(c)->n_inputs;
  int d = n == 1 ? GO(0) : wt_grad_op2(c, "Div", GO(0), wt_grad_const_f32(c, (float)n));
  for (int i = 0; i < n; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_unbroadcast(c, d, 0, i));
  return wt_grad_status(c);
}

/* PRelu: y = x < 0 ? x * slope : x. dX = x < 0 ? dY * slope : dY; dSlope = unbroadcast(x < 0 ?
 * dY * x : 0). */
static int prelu_grad(wt_grad_ctx *c) {
  int zero = wt_grad_const_f32(c, 0.0f);
  int neg = wt_grad_op2(c, "Less", I(0), zero);
  if (wt_grad_need(c, 0)) {
    int d = wt_grad_op1(c, "Where", "", 3, (int[]){neg, wt_grad_op2(c, "Mul", GO(0), I(1)), GO(0)});
    wt_grad_set(c, 0, d);
  }
  if (wt_grad_need(c, 1)) {
    int d = wt_grad_op1(c, "Where", "", 3, (int[]){neg, wt_grad_op2(c, "Mul", GO(0), I(0)), zero});
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, d, 0, 1));
  }
  return wt_grad_status(c);
}

/* Where(cond, X, Y): X gets dY where cond, Y elsewhere (ONNX Runtime's), each unbroadcast. */
static int where_grad(wt_grad_ctx *c) {
  int zero = wt_grad_const_f32(c, 0.0f);
  for (int i = 1; i <= 2; i++) {
    if (!wt_grad_need(c, i)) continue;
    int ins[3] = {I(0), i == 1 ? GO(0) : zero, i == 1 ? zero : GO(0)};
    wt_grad_set(c, i, wt_grad_unbroadcast(c, wt_grad_op1(c, "Where", "", 3, ins), 0, i));
  }
  return wt_grad_status(c);
}

/* ---- DivGrad (com.microsoft): (dY, A, B) -> (dA, dB) ----------------------------------------- */

static int div_grad_infer(wt_infer_ctx *ctx) {
  const char *names[3] = {"dY", "A", "B"};
  for (int i = 0; i < 3; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  const wt_tensor *ab[2] = {&ctx->in[1], &ctx->in[2]};
  int rank;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(wt_broadcast_shapes(2, ab, &rank, dims));
  const wt_tensor *dy = &ctx->in[0];
  int same = rank == dy->rank;
  for (int i = 0; same && i < rank; i++) same = dims[i] == dy->dims[i];
  if (!same || rank > WT_BCAST_MAX_RANK) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s; expected A and B's broadcast shape %s",
                     wt_shape_str(dy->rank, dy->dims, a, sizeof a), wt_shape_str(rank, dims, b, sizeof b));
  }
  for (int o = 0; o < ctx->n_out; o++)
    wt_set_shape(&ctx->out[o], WT_FLOAT, ab[o]->rank, ab[o]->dims);
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

static const wt_op_def wt_op_DivGrad = {.domain = WT_MS, .op_type = "DivGrad", .min_inputs = 3,
                                 .max_inputs = 3, .min_outputs = 1, .max_outputs = 2,
                                 .infer = div_grad_infer,
                                 .flags = WT_OP_GRADIENT};

#define BIN_DEF(NAME, KIND, OP, DTYPES, MIN_IN, MAX_IN, GRAD)                               \
  static const wt_op_def wt_op_##NAME = {                                                    \
      .domain = "", .op_type = #NAME, .min_inputs = MIN_IN, .max_inputs = MAX_IN,             \
      .min_outputs = 1, .max_outputs = 1, .infer = infer, .grad = GRAD,                       \
      .flags = WT_OP_INPLACE, .spec = &(const bin_spec){KIND, OP, DTYPES}};
BINARY_OPS(BIN_DEF)

#define BIN_LIST(NAME, ...) &wt_op_##NAME,
const wt_op_def *const wt_ops_binary[] = {BINARY_OPS(BIN_LIST) &wt_op_DivGrad, NULL};

#define BIN_KERNEL(NAME, ...) {.key = {"", #NAME}, .run = run},
const wt_cpu_kernel wt_cpu_kernels_binary[] = {
    BINARY_OPS(BIN_KERNEL){.key = {WT_MS, "DivGrad"}, .run = div_grad_run}, WT_CPU_KERNELS_END};
