/* The binary family on the GPU: float arithmetic with numpy broadcasting through binary.wgsl;
 * also its dispatch for the other families that map two tensors elementwise (kernel.h). */
#include "backend/webgpu/kernel.h"
#include <string.h>

#include "ops/binary_ops.h"

enum { U_N, U_GX, U_OP, U_RANK, U_DIMS = 4, U_SA = 12, U_SB = 20, U_ALPHA = 28 };
#define GPU_BIN_RANK 8

void wt_gpu_bcast_strides(const wt_tensor *t, const wt_tensor *y, uint32_t *s) {
  int64_t step = 1;
  for (int a = y->rank - 1; a >= 0; a--) {
    int ta = a - (y->rank - t->rank);
    int64_t dim = ta >= 0 ? t->dims[ta] : 1;
    s[a] = dim == 1 ? 0 : (uint32_t)step;
    step *= dim;
  }
}

int wt_gpu_binary_dispatch(wt_gpu_dispatch *d, int op, float alpha, int8_t ba, const wt_tensor *ta,
                           int8_t bb, const wt_tensor *tb, int8_t bc, const wt_tensor *tc) {
  int64_t n = wt_numel(tc);
  int r = wt_gpu_check_elems(n, "the output");
  if (r) return r;
  if (tc->rank > GPU_BIN_RANK)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend maps tensors of rank %d at most (got %d)", GPU_BIN_RANK,
                       tc->rank);
  *d = (wt_gpu_dispatch){.program = "binary", .n_bind = 3, .bind = {ba, bb, bc}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)n;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  d->uniform[U_RANK] = (uint32_t)tc->rank;
  for (int a = 0; a < tc->rank; a++) d->uniform[U_DIMS + a] = (uint32_t)tc->dims[a];
  wt_gpu_bcast_strides(ta, tc, &d->uniform[U_SA]);
  if (tb) wt_gpu_bcast_strides(tb, tc, &d->uniform[U_SB]);
  wt_gpu_f32(&d->uniform[U_ALPHA], alpha);
  return 1;
}

static int gpu_op(int ew) {
  switch (ew) {
  case WT_EW_ADD: return WT_GB_ADD;
  case WT_EW_SUB: return WT_GB_SUB;
  case WT_EW_MUL: return WT_GB_MUL;
  case WT_EW_DIV: return WT_GB_DIV;
  case WT_EW_MIN: return WT_GB_MIN;
  case WT_EW_MAX: return WT_GB_MAX;
  case WT_EW_POW: return WT_GB_POW;
  case WT_EW_PRELU: return WT_GB_PRELU;
  default: return -1;
  }
}

/* Two inputs: one dispatch. More (variadic Sum, Min, Max): folded in order, ((a op b) op c) ...,
 * as the CPU does, through full-shape scratch; one: a copy. */
static int encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bin_params *p = c->params;
  int op = p->kind == K_ARITH && !p->mean ? gpu_op(p->op) : -1;
  for (int i = 0; i < c->n_in && op >= 0; i++)
    if (c->in[i].dtype != WT_FLOAT) op = -1;
  if (op < 0 || c->n_in > cap + 1)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs this op on 1 to %d float32 inputs only (got %d of dtype %s)", cap + 1,
                       c->n_in, wt_dtype_name(c->in[0].dtype));
  const wt_tensor *y = &c->out[0];
  if (c->n_in == 1) return wt_gpu_binary_dispatch(d, WT_GB_COPY_A, 0.0f, WT_GPU_IN(0), &c->in[0], WT_GPU_NONE, NULL, WT_GPU_OUT(0), y);
  for (int k = 1; k < c->n_in; k++) {
    int8_t a = k == 1 ? WT_GPU_IN(0) : WT_GPU_SCRATCH(k % 2);
    int8_t out = k == c->n_in - 1 ? WT_GPU_OUT(0) : WT_GPU_SCRATCH((k + 1) % 2);
    if (out != WT_GPU_OUT(0)) c->scratch[(k + 1) % 2] = (uint64_t)wt_nbytes(y);
    int r = wt_gpu_binary_dispatch(&d[k - 1], op, 0.0f, a, k == 1 ? &c->in[0] : y, WT_GPU_IN(k), &c->in[k], out, y);
    if (r < 0) return r;
  }
  return c->n_in - 1;
}

/* compare.wgsl's operand kinds, and its ops in wt_ew_cmp order of the family's list. */
static int cmp_kind(int dtype) { return dtype == WT_FLOAT ? 0 : dtype == WT_INT32 ? 1 : dtype == WT_INT64 ? 2 : -1; }

static int gpu_cmp(int ew) {
  switch (ew) {
  case WT_EW_EQ: return 0;
  case WT_EW_LT: return 1;
  case WT_EW_GT: return 2;
  case WT_EW_LE: return 3;
  case WT_EW_GE: return 4;
  default: return -1;
  }
}

enum { C_KIND = 28 }; /* compare.wgsl's kind word, after binary.wgsl's layout */

static int compare_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bin_params *p = c->params;
  int kind = cmp_kind(c->in[0].dtype), op = gpu_cmp(p->op);
  if (kind < 0 || op < 0)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend compares float32, int32 and int64 only (got %s)",
                       wt_dtype_name(c->in[0].dtype));
  int r = wt_gpu_binary_dispatch(d, 0, 0.0f, WT_GPU_IN(0), &c->in[0], WT_GPU_IN(1), &c->in[1], WT_GPU_OUT(0), &c->out[0]);
  if (r < 0) return r;
  (void)cap;
  d->program = "compare";
  wt_gpu_grid_1d(d, (wt_numel(&c->out[0]) + 3) / 4, WT_GPU_WG); /* a thread per word of 4 bools */
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  d->uniform[C_KIND] = (uint32_t)kind;
  return 1;
}

/* where.wgsl's uniform words. */
enum { W_N, W_GX, W_RANK, W_WIDTH, W_DIMS = 4, W_SC = 12, W_SX = 20, W_SZ = 28 };

static int where_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *y = &c->out[0];
  int width = wt_gpu_words(y->dtype);
  (void)cap;
  if (!width)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend selects float32, int32 and int64 values only (got %s)",
                       wt_dtype_name(y->dtype));
  int64_t n = wt_numel(y);
  int r = wt_gpu_check_elems(n * width, "the output");
  if (r) return r;
  if (y->rank > GPU_BIN_RANK)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend maps tensors of rank %d at most (got %d)", GPU_BIN_RANK, y->rank);
  *d = (wt_gpu_dispatch){.program = "where", .n_bind = 4, .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_IN(2), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[W_N] = (uint32_t)n;
  d->uniform[W_GX] = d->groups[0];
  d->uniform[W_RANK] = (uint32_t)y->rank;
  d->uniform[W_WIDTH] = (uint32_t)width;
  for (int a = 0; a < y->rank; a++) d->uniform[W_DIMS + a] = (uint32_t)y->dims[a];
  wt_gpu_bcast_strides(&c->in[0], y, &d->uniform[W_SC]);
  wt_gpu_bcast_strides(&c->in[1], y, &d->uniform[W_SX]);
  wt_gpu_bcast_strides(&c->in[2], y, &d->uniform[W_SZ]);
  return 1;
}

/* And, Or, Xor of bools through compare.wgsl (kind 3); Not (the unary family's) too. */
static int logic_dispatch(wt_gpu_ctx *c, wt_gpu_dispatch *d, int op, const wt_tensor *b) {
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i].dtype != WT_BOOL)
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs %s on bool only (got %s)", c->node->op_type,
                         wt_dtype_name(c->in[i].dtype));
  int r = wt_gpu_binary_dispatch(d, 0, 0.0f, WT_GPU_IN(0), &c->in[0], b ? WT_GPU_IN(1) : WT_GPU_NONE, b, WT_GPU_OUT(0),
                                 &c->out[0]);
  if (r < 0) return r;
  d->program = "compare";
  wt_gpu_grid_1d(d, (wt_numel(&c->out[0]) + 3) / 4, WT_GPU_WG);
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  d->uniform[C_KIND] = 3;
  return 1;
}

int wt_gpu_not_dispatch(wt_gpu_ctx *c, wt_gpu_dispatch *d) { return logic_dispatch(c, d, 8, NULL); }

static int cmp_or_where_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bin_params *p = c->params;
  if (p->kind == K_LOGIC) return logic_dispatch(c, d, 5 + (p->op - WT_EW_AND), &c->in[1]);
  return p->kind == K_WHERE ? where_encode(c, d, cap) : compare_encode(c, d, cap);
}

/* div_grad.wgsl's uniform words (binary.wgsl's layout up to b's strides). */
enum { G_WHICH = U_OP, G_REDUCED = 28, G_M };

/* DivGrad(dY, A, B) -> (dA, dB): a dispatch per gradient the node asks for, each summing its
 * terms over the axes its operand was broadcast along. */
static int div_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *dy = &c->in[0];
  int nd = 0;
  (void)cap;
  for (int k = 0; k < 3; k++)
    if (c->in[k].dtype != WT_FLOAT)
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs DivGrad on float32 only (got %s)",
                         wt_dtype_name(c->in[k].dtype));
  for (int which = 0; which < 2 && which < c->n_out; which++) {
    if (c->node->outputs[which] < 0) continue;
    const wt_tensor *t = &c->in[1 + which];
    /* binary.wgsl's dims and strides of a and b over dy's shape, then div_grad.wgsl's words */
    int r = wt_gpu_binary_dispatch(&d[nd], 0, 0.0f, WT_GPU_IN(1), &c->in[1], WT_GPU_IN(2), &c->in[2], WT_GPU_OUT(which), dy);
    if (r < 0) return r;
    uint32_t reduced = 0, m = 1;
    for (int a = 0; a < dy->rank; a++) {
      int ta = a - (dy->rank - t->rank);
      if ((ta < 0 || t->dims[ta] == 1) && dy->dims[a] != 1) {
        reduced |= 1u << a;
        m *= (uint32_t)dy->dims[a];
      }
    }
    wt_gpu_dispatch *g = &d[nd++];
    g->program = "div_grad";
    g->n_bind = 4;
    memcpy(g->bind, (int8_t[]){WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_IN(2), WT_GPU_OUT(which)}, 4);
    wt_gpu_grid_1d(g, wt_numel(t), WT_GPU_WG);
    g->uniform[U_N] = (uint32_t)wt_numel(t);
    g->uniform[U_GX] = g->groups[0];
    g->uniform[G_WHICH] = (uint32_t)which;
    g->uniform[G_REDUCED] = reduced;
    g->uniform[G_M] = m;
  }
  return nd ? nd : WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "DivGrad asks for neither gradient");
}

const wt_gpu_kernel wt_gpu_kernels_binary[] = {
    {.key = {"", "Add"}, .encode = encode},
    {.key = {"", "Sub"}, .encode = encode},
    {.key = {"", "Mul"}, .encode = encode},
    {.key = {"", "Div"}, .encode = encode},
    {.key = {"", "Pow"}, .encode = encode},
    {.key = {"", "PRelu"}, .encode = encode},
    {.key = {"", "Sum"}, .encode = encode},
    {.key = {"", "Min"}, .encode = encode},
    {.key = {"", "Max"}, .encode = encode},
    {.key = {"", "Equal"}, .encode = cmp_or_where_encode},
    {.key = {"", "Less"}, .encode = cmp_or_where_encode},
    {.key = {"", "Greater"}, .encode = cmp_or_where_encode},
    {.key = {"", "LessOrEqual"}, .encode = cmp_or_where_encode},
    {.key = {"", "GreaterOrEqual"}, .encode = cmp_or_where_encode},
    {.key = {"", "Where"}, .encode = cmp_or_where_encode},
    {.key = {"", "And"}, .encode = cmp_or_where_encode},
    {.key = {"", "Or"}, .encode = cmp_or_where_encode},
    {.key = {"", "Xor"}, .encode = cmp_or_where_encode},
    {.key = {"com.microsoft", "DivGrad"}, .encode = div_grad_encode},
    {.key = {0}},
};
