/* The pool family on the GPU: MaxPool (with its Indices output), AveragePool and GlobalMaxPool
 * through pool.wgsl, one thread per output; MaxPoolGrad and AveragePoolGrad through
 * pool_grad.wgsl, one thread per dX element gathering from the windows that cover it (no
 * scatter); GlobalAveragePool as a mean through reduce.wgsl. */
#include "backend/webgpu/kernel.h"
#include "ops/pool_params.h"

/* Uniform words of pool.wgsl and pool_grad.wgsl. */
enum { U_N, U_GX, U_MODE, U_FLAGS, U_PLANES, U_GEOM = 8, U_PAD_END = 32 };
enum { MODE_MAX, MODE_AVG };
enum { F_INDICES = 1, F_COUNT_PAD = 2 };

/* A dispatch of `program` over the n elements of `t` (the output, or dX), (n, c) planes of it. */
static int pool_dispatch(wt_gpu_dispatch *d, const char *program, const wt_tensor *t, const pool_params *p, int mode,
                         uint32_t flags) {
  int64_t n = wt_numel(t);
  int r = wt_gpu_check_elems(n, "the output");
  if (!r) r = wt_gpu_check_elems(t->dims[0] * t->dims[1] * wt_conv_img_size(&p->g), "the input");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = program, .n_bind = 3};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  uint32_t *u = d->uniform;
  u[U_N] = (uint32_t)n;
  u[U_GX] = d->groups[0];
  u[U_MODE] = (uint32_t)mode;
  u[U_FLAGS] = flags;
  u[U_PLANES] = (uint32_t)(t->dims[0] * t->dims[1]);
  wt_gpu_geom_words(&u[U_GEOM], &p->g);
  for (int a = 0; a < 3; a++) u[U_PAD_END + a] = (uint32_t)(int32_t)p->pad_end[a];
  return 1;
}

static int maxpool_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const pool_params *p = c->params;
  (void)cap;
  int ind = p->want_indices && wt_gpu_wants(c, 1);
  if (ind && p->storage_order)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend writes MaxPool's Indices row-major (storage_order 0) only");
  int r = pool_dispatch(d, "pool", &c->out[0], p, MODE_MAX, ind ? F_INDICES : 0);
  d->bind[0] = WT_GPU_IN(0);
  d->bind[1] = WT_GPU_OUT(0);
  d->bind[2] = ind ? WT_GPU_OUT(1) : WT_GPU_NONE;
  return r;
}

static int avgpool_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const pool_params *p = c->params;
  (void)cap;
  int r = pool_dispatch(d, "pool", &c->out[0], p, MODE_AVG, p->count_include_pad ? F_COUNT_PAD : 0);
  d->bind[0] = WT_GPU_IN(0);
  d->bind[1] = WT_GPU_OUT(0);
  d->bind[2] = WT_GPU_NONE;
  return r;
}

/* The global pools' window: the whole plane (at most 3 spatial dims, normalized to 3). */
static int global_geom(const wt_tensor *x, pool_params *p) {
  int nsp = x->rank - 2;
  if (nsp > 3)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs GlobalMaxPool over 1 to 3 spatial dims (got %d)", nsp);
  *p = (pool_params){0};
  for (int a = 0; a < 3; a++) {
    int i = a - (3 - nsp);
    p->g.img[a] = p->g.k[a] = i < 0 ? 1 : x->dims[2 + i];
    p->g.grid[a] = p->g.stride[a] = p->g.dil[a] = 1;
  }
  return 0;
}

static int global_maxpool_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  pool_params p;
  int r = global_geom(&c->in[0], &p);
  if (!r) r = pool_dispatch(d, "pool", &c->out[0], &p, MODE_MAX, 0);
  d->bind[0] = WT_GPU_IN(0);
  d->bind[1] = WT_GPU_OUT(0);
  d->bind[2] = WT_GPU_NONE;
  return r;
}

static int global_avgpool_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *x = &c->in[0];
  (void)cap;
  int r = wt_gpu_check_elems(wt_numel(x), "the input");
  if (r) return r;
  int64_t S = wt_dims_prod(x->dims, 2, x->rank);
  wt_gpu_reduce_dispatch(d, WT_GPU_IN(0), WT_GPU_OUT(0), x->dims[0] * x->dims[1], S, 1, 1, (float)S);
  return 1;
}

/* The gradients gather through the forward geometry, which a MaxPoolGrad node without
 * attributes (sized only by its declared dX) lacks. */
static int pool_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int mode, uint32_t flags) {
  const pool_params *p = c->params;
  if (p->g.k[0] == 0)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs MaxPoolGrad with the forward's attributes "
                       "(kernel_shape ...) only");
  int r = pool_dispatch(d, "pool_grad", &c->out[0], p, mode, flags);
  d->bind[0] = WT_GPU_IN(0);
  d->bind[1] = mode == MODE_MAX ? WT_GPU_IN(1) : WT_GPU_NONE;
  d->bind[2] = WT_GPU_OUT(0);
  return r;
}

/* dX[i] gathers dY where Indices names i: the indices MaxPool writes, each inside its own
 * window (row-major, storage_order 0, as infer requires). */
static int maxpool_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  return pool_grad_encode(c, d, MODE_MAX, 0);
}

static int avgpool_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const pool_params *p = c->params;
  (void)cap;
  return pool_grad_encode(c, d, MODE_AVG, p->count_include_pad ? F_COUNT_PAD : 0);
}

const wt_gpu_kernel wt_gpu_kernels_pool[] = {
    {.key = {"", "MaxPool"}, .encode = maxpool_encode},
    {.key = {"", "AveragePool"}, .encode = avgpool_encode},
    {.key = {"", "GlobalAveragePool"}, .encode = global_avgpool_encode},
    {.key = {"", "GlobalMaxPool"}, .encode = global_maxpool_encode},
    {.key = {"", "MaxPoolGrad"}, .encode = maxpool_grad_encode},
    {.key = {"", "AveragePoolGrad"}, .encode = avgpool_grad_encode},
    {.key = {0}},
};
