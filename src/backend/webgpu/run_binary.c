/* The binary family on the GPU: two-input float arithmetic with numpy broadcasting through
 * binary.wgsl. */
#include "backend/webgpu/kernel.h"
#include "ops/binary_ops.h"

/* binary.wgsl's op codes. */
enum { GB_ADD, GB_SUB, GB_MUL, GB_DIV, GB_MIN, GB_MAX, GB_PRELU };
/* Uniform words of binary.wgsl: n, gx, op, rank, then 8 words each of dims and strides. */
enum { U_N, U_GX, U_OP, U_RANK, U_DIMS = 4, U_SA = 12, U_SB = 20 };
#define GPU_BIN_RANK 8

static int gpu_op(int ew) {
  switch (ew) {
  case WT_EW_ADD: return GB_ADD;
  case WT_EW_SUB: return GB_SUB;
  case WT_EW_MUL: return GB_MUL;
  case WT_EW_DIV: return GB_DIV;
  case WT_EW_MIN: return GB_MIN;
  case WT_EW_MAX: return GB_MAX;
  case WT_EW_PRELU: return GB_PRELU;
  default: return -1;
  }
}

/* Element strides of t read at the output's indices (aligned to its innermost axes, 0 where t
 * is broadcast). */
static void strides(const wt_tensor *t, const wt_tensor *y, uint32_t *s) {
  int64_t step = 1;
  for (int a = y->rank - 1; a >= 0; a--) {
    int ta = a - (y->rank - t->rank);
    int64_t dim = ta >= 0 ? t->dims[ta] : 1;
    s[a] = dim == 1 ? 0 : (uint32_t)step;
    step *= dim;
  }
}

static int encode(const wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bin_params *p = c->params;
  const wt_tensor *y = &c->out[0];
  (void)cap;
  int op = p->kind == K_ARITH && !p->mean && c->n_in == 2 ? gpu_op(p->op) : -1;
  if (op < 0 || c->in[0].dtype != WT_FLOAT || c->in[1].dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "the webgpu backend runs this op on two float32 inputs only (got %d input%s of dtype %s)",
                     c->n_in, c->n_in == 1 ? "" : "s", wt_dtype_name(c->in[0].dtype));
  int64_t n = wt_numel(y);
  if (n > (int64_t)UINT32_MAX / 2 || y->rank > GPU_BIN_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "the webgpu backend indexes with 32 bits; the output is %lld elements",
                     (long long)n);
  *d = (wt_gpu_dispatch){.program = "binary", .n_bind = 3,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)n;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  d->uniform[U_RANK] = (uint32_t)y->rank;
  for (int a = 0; a < y->rank; a++) d->uniform[U_DIMS + a] = (uint32_t)y->dims[a];
  strides(&c->in[0], y, &d->uniform[U_SA]);
  strides(&c->in[1], y, &d->uniform[U_SB]);
  return 1;
}

const wt_gpu_kernel wt_gpu_kernels_binary[] = {
    {.key = {"", "Add"}, .encode = encode},
    {.key = {"", "Sub"}, .encode = encode},
    {.key = {"", "Mul"}, .encode = encode},
    {.key = {"", "Div"}, .encode = encode},
    {.key = {"", "PRelu"}, .encode = encode},
    {.key = {0}},
};
