/* The norm_grad family on the GPU: BatchNormalizationGrad (bn_grad.wgsl, one workgroup per
 * channel: its sums, then its dX) and LayerNormalizationGrad (ln_grad.wgsl: dX one workgroup
 * per row, then dScale / dBias one thread per column over the rows in order). Every sum is a
 * fixed-order loop or tree reduction: the same bits run to run. */
#include "backend/webgpu/kernel.h"
#include "ops/norm_grad_params.h"

/* The outputs to write: 1 dX, 2 dScale, 4 dBias. */
static uint32_t wanted(const wt_gpu_ctx *c) {
  return (wt_gpu_wants(c, 0) ? 1u : 0u) | (wt_gpu_wants(c, 1) ? 2u : 0u) | (wt_gpu_wants(c, 2) ? 4u : 0u);
}

/* Both take (dY, X, scale, mean, inv_std) to (dX, dScale, dBias). */
static void grad_binds(const wt_gpu_ctx *c, wt_gpu_dispatch *d, const char *program) {
  *d = (wt_gpu_dispatch){.program = program, .n_bind = 8,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_IN(2), WT_GPU_IN(3), WT_GPU_IN(4),
                                  wt_gpu_out_or_none(c, 0), wt_gpu_out_or_none(c, 1), wt_gpu_out_or_none(c, 2)}};
}

static int bng_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bng_params *p = c->params;
  (void)cap;
  int r = wt_gpu_check_elems(wt_numel(&c->in[1]), "the input");
  if (r) return r;
  grad_binds(c, d, "bn_grad");
  wt_gpu_grid_1d(d, p->C, 1);
  d->uniform[0] = (uint32_t)p->C;
  d->uniform[1] = d->groups[0];
  d->uniform[2] = (uint32_t)p->N;
  d->uniform[3] = (uint32_t)p->S;
  d->uniform[4] = wanted(c);
  return 1;
}

enum { LN_ROWS, LN_COLUMNS };

static void ln_dispatch(const wt_gpu_ctx *c, wt_gpu_dispatch *d, const lng_params *p, int mode) {
  grad_binds(c, d, "ln_grad");
  if (mode == LN_ROWS) wt_gpu_grid_1d(d, p->rows, 1);
  else wt_gpu_grid_1d(d, p->n, 64);
  d->uniform[0] = (uint32_t)p->rows;
  d->uniform[1] = d->groups[0];
  d->uniform[2] = (uint32_t)p->n;
  d->uniform[3] = (uint32_t)mode;
  d->uniform[4] = wanted(c);
}

static int lng_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const lng_params *p = c->params;
  (void)cap;
  int r = wt_gpu_check_elems(p->rows * p->n, "the input");
  if (r) return r;
  int nd = 0;
  if (wt_gpu_wants(c, 0)) ln_dispatch(c, &d[nd++], p, LN_ROWS);
  if (wt_gpu_wants(c, 1) || wt_gpu_wants(c, 2)) ln_dispatch(c, &d[nd++], p, LN_COLUMNS);
  if (!nd) return WT_GPU_FAIL(WT_ERR_INVALID_ARG, "the node asks for none of dX, dScale, dBias");
  return nd;
}

const wt_gpu_kernel wt_gpu_kernels_norm_grad[] = {
    {.key = {"com.microsoft", "LayerNormalizationGrad"}, .encode = lng_encode},
    {.key = {"com.microsoft", "BatchNormalizationGrad"}, .encode = bng_encode},
    {.key = {0}},
};
