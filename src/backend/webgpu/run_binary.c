/* The binary family on the GPU: float arithmetic with numpy broadcasting through binary.wgsl;
 * also its dispatch for the other families that map two tensors elementwise (kernel.h). */
#include "backend/webgpu/kernel.h"
#include "ops/binary_ops.h"

enum { U_N, U_GX, U_OP, U_RANK, U_DIMS = 4, U_SA = 12, U_SB = 20, U_ALPHA = 28 };
#define GPU_BIN_RANK 8

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
  strides(ta, tc, &d->uniform[U_SA]);
  if (tb) strides(tb, tc, &d->uniform[U_SB]);
  wt_gpu_f32(&d->uniform[U_ALPHA], alpha);
  return 1;
}

int wt_gpu_gather_dispatch(wt_gpu_dispatch *d, int8_t ba, int8_t bc, const wt_tensor *tc, const uint32_t *strides) {
  int r = wt_gpu_binary_dispatch(d, WT_GB_COPY_A, 0.0f, ba, tc, WT_GPU_NONE, NULL, bc, tc);
  if (r > 0)
    for (int a = 0; a < tc->rank; a++) d->uniform[U_SA + a] = strides[a];
  return r;
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
    {.key = {0}},
};
