/* The conv family on the GPU: Conv, ConvTranspose and their gradients as direct convolutions
 * (no im2col buffer: its size grows with the kernel and would pass the binding limit on large
 * models). Three programs over the 3-D-normalized geometry of ops/conv_geom.h, whose "grid" side
 * is the window positions and "img" side the dense image:
 *   conv.wgsl            grid from img: Conv; ConvTransposeGrad's dX
 *   conv_transpose.wgsl  img from grid (the adjoint): ConvTranspose; ConvGrad's dX
 *   conv_wgrad.wgsl      the weight and bias gradients (one thread per output for short sums
 *                        over batch and grid, else one workgroup with a fixed-order tree)
 * In each, the weight is indexed [grid channel, img channel within its group, kernel]: Conv's
 * W [M, C/group, k] and ConvTranspose's W [C, M/group, k] alike. */
#include "backend/webgpu/kernel.h"
#include "ops/conv_params.h"

/* Uniform words shared by the three programs (the geometry: wt_gpu_geom_words). */
enum { U_N, U_GX, U_FLAGS, U_GROUP, U_BATCH, U_GCH, U_ICH, U_GEOM = 8 };
enum { F_BIAS = 1, F_BIAS_GRAD = 2, F_IMG_SIDE = 4, F_SERIAL = 8, F_HALF_W = 16 };
/* The longest sum conv_wgrad.wgsl adds in one thread (F_SERIAL); longer ones take a workgroup,
 * whose tree reduction costs barriers (dearest on a software adapter). */
#define SERIAL_TERMS 4096

/* A dispatch of `program` over `count` threads (wgrad: workgroups) with the geometry, `batch`
 * images of gch grid-side and ich img-side channels. */
static int conv_dispatch(wt_gpu_dispatch *d, const char *program, int64_t count, int per, const conv_params *p,
                         int64_t batch, int64_t gch, int64_t ich, uint32_t flags) {
  int r = wt_gpu_check_elems(count, "the output");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = program};
  wt_gpu_grid_1d(d, count, per);
  uint32_t *u = d->uniform;
  u[U_N] = (uint32_t)count;
  u[U_GX] = d->groups[0];
  u[U_FLAGS] = flags;
  u[U_GROUP] = (uint32_t)p->group;
  u[U_BATCH] = (uint32_t)batch;
  u[U_GCH] = (uint32_t)gch;
  u[U_ICH] = (uint32_t)ich;
  wt_gpu_geom_words(&u[U_GEOM], &p->g);
  return 1;
}

static void bind(wt_gpu_dispatch *d, int n, const int8_t *b) {
  d->n_bind = n;
  for (int i = 0; i < n; i++) d->bind[i] = b[i];
}

/* A float16 W (a frozen weight the plan left float16) is widened as the programs read it; a
 * frozen weight has no gradient to compute. */
static int half_flag(const conv_params *p) {
  if (!p->w_half) return 0;
  if (p->want[1]) return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "a float16 W is a frozen weight: the webgpu backend computes no dW for it");
  return F_HALF_W;
}

/* The sizes the programs index with 32 bits: every operand of the step. */
static int check_sizes(const wt_gpu_ctx *c) {
  for (int i = 0; i < c->n_in; i++) {
    int r = wt_gpu_check_elems(wt_numel(&c->in[i]), "an input");
    if (r) return r;
  }
  return 0;
}

static int conv_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const conv_params *p = c->params;
  (void)cap;
  int half = half_flag(p), r = half < 0 ? half : check_sizes(c);
  if (r) return r;
  const wt_tensor *y = &c->out[0];
  r = conv_dispatch(d, "conv", wt_numel(y), 64, p, y->dims[0], p->M, p->C, (p->has_bias ? F_BIAS : 0) | half);
  bind(d, 4, (int8_t[]){WT_GPU_IN(0), WT_GPU_IN(1), p->has_bias ? WT_GPU_IN(2) : WT_GPU_NONE, WT_GPU_OUT(0)});
  return r;
}

static int conv_transpose_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const conv_params *p = c->params;
  (void)cap;
  int r = check_sizes(c);
  if (r) return r;
  const wt_tensor *y = &c->out[0];
  r = conv_dispatch(d, "conv_transpose", wt_numel(y), 64, p, y->dims[0], p->C, p->M, p->has_bias ? F_BIAS : 0);
  bind(d, 4, (int8_t[]){WT_GPU_IN(0), WT_GPU_IN(1), p->has_bias ? WT_GPU_IN(2) : WT_GPU_NONE, WT_GPU_OUT(0)});
  return r;
}

/* ConvGrad(dY, X, W) and ConvTransposeGrad(dY, X, W): the outputs the node asks for, one
 * dispatch each. For Conv dY is grid-side (M channels) and X img-side (C); for ConvTranspose
 * the other way round (X grid-side with C channels, dY img-side with M). */
static int grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int transpose) {
  const conv_params *p = c->params;
  int half = half_flag(p), r = half < 0 ? half : check_sizes(c);
  if (r) return r;
  int64_t N = c->in[1].dims[0], gch = transpose ? p->C : p->M, ich = transpose ? p->M : p->C;
  int8_t grid_v = transpose ? WT_GPU_IN(1) : WT_GPU_IN(0), img_v = transpose ? WT_GPU_IN(0) : WT_GPU_IN(1);
  int nd = 0;
  if (p->want[0]) {
    r = transpose ? conv_dispatch(&d[nd], "conv", wt_numel(&c->out[0]), 64, p, N, gch, ich, half)
                  : conv_dispatch(&d[nd], "conv_transpose", wt_numel(&c->out[0]), 64, p, N, gch, ich, half);
    if (r < 0) return r;
    bind(&d[nd++], 4, (int8_t[]){WT_GPU_IN(0), WT_GPU_IN(2), WT_GPU_NONE, WT_GPU_OUT(0)});
  }
  /* the weight gradient's terms: batch times grid; the bias's: batch times dY's plane */
  int64_t wterms = N * wt_conv_grid_size(&p->g), bterms = N * (transpose ? wt_conv_img_size(&p->g) : wt_conv_grid_size(&p->g));
  if (p->want[1]) {
    int serial = wterms <= SERIAL_TERMS;
    r = conv_dispatch(&d[nd], "conv_wgrad", wt_numel(&c->out[1]), serial ? 64 : 1, p, N, gch, ich, serial ? F_SERIAL : 0);
    if (r < 0) return r;
    bind(&d[nd++], 3, (int8_t[]){grid_v, img_v, WT_GPU_OUT(1)});
  }
  if (p->want[2]) {
    int serial = bterms <= SERIAL_TERMS;
    r = conv_dispatch(&d[nd], "conv_wgrad", p->M, serial ? 64 : 1, p, N, gch, ich,
                      F_BIAS_GRAD | (transpose ? F_IMG_SIDE : 0) | (serial ? F_SERIAL : 0));
    if (r < 0) return r;
    /* dB sums dY: bound as the program's grid-side operand, the img-side one unused */
    bind(&d[nd++], 3, (int8_t[]){WT_GPU_IN(0), WT_GPU_NONE, WT_GPU_OUT(2)});
  }
  if (!nd) return WT_GPU_FAIL(WT_ERR_INVALID_ARG, "the node asks for none of dX, dW, dB");
  return nd;
}

static int conv_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  return grad_encode(c, d, 0);
}

static int conv_transpose_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  return grad_encode(c, d, 1);
}

const wt_gpu_kernel wt_gpu_kernels_conv[] = {
    {.key = {"", "Conv"}, .encode = conv_encode},
    {.key = {"", "ConvTranspose"}, .encode = conv_transpose_encode},
    {.key = {"com.microsoft", "ConvGrad"}, .encode = conv_grad_encode},
    {.key = {"com.microsoft", "ConvTransposeGrad"}, .encode = conv_transpose_grad_encode},
    {.key = {0}},
};
