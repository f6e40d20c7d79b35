/* The resize family on the GPU: Resize / Upsample of float32 and ResizeGrad, one resize.wgsl
 * pass per resized axis (as the CPU's separable passes: forward from the last axis, the
 * adjoint from the first), through two scratches. The taps (source coordinate, nearest
 * rounding, linear / cubic weights, exclude_outside) are computed by the program in float32
 * from the constants set here; the CPU computes them in double, so weights may differ in their
 * last bit. */
#include "backend/webgpu/kernel.h"
#include "ops/resize_params.h"

/* Uniform words of resize.wgsl. */
enum { U_N, U_GX, U_IN, U_OUT, U_INNER, U_MODE, U_COORD, U_NEAREST, U_EXCLUDE, U_GRAD, U_CUBIC_A, U_INV_SCALE,
       U_RATIO, U_ONE_OUT };

/* The pass over axis d of a [outer, in, inner] view to [outer, out, inner]: n threads, one per
 * element written (the forward's output, the adjoint's dX). */
static void pass(wt_gpu_dispatch *d, const rs_params *p, int axis, int64_t outer, int64_t inner, double scale,
                 int grad) {
  int64_t in = p->in_dims[axis], out = p->out_dims[axis], n = outer * (grad ? in : out) * inner;
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  uint32_t *u = d->uniform;
  u[U_N] = (uint32_t)n;
  u[U_GX] = d->groups[0];
  u[U_IN] = (uint32_t)in;
  u[U_OUT] = (uint32_t)out;
  u[U_INNER] = (uint32_t)inner;
  u[U_MODE] = (uint32_t)p->cfg.mode;
  u[U_COORD] = (uint32_t)p->cfg.coord;
  u[U_NEAREST] = (uint32_t)p->cfg.nearest_mode;
  u[U_EXCLUDE] = (uint32_t)p->cfg.exclude_outside;
  u[U_GRAD] = (uint32_t)grad;
  wt_gpu_f32(&u[U_CUBIC_A], p->cfg.cubic_a);
  wt_gpu_f32(&u[U_INV_SCALE], (float)(1.0 / scale));
  /* align_corners: in - 1 over the fractional output length less one, as the CPU */
  double len = scale * (double)in;
  wt_gpu_f32(&u[U_RATIO], len == 1.0 ? 0.0f : (float)((double)(in - 1) / (len - 1.0)));
  u[U_ONE_OUT] = (uint32_t)(out == 1) | (len == 1.0 ? 2u : 0u);
}

/* Whether axis a maps each position to itself, a pass that can be left out. At scale 1 the
 * source coordinate is the position itself in these modes (pytorch_half_pixel but for a length of
 * 1); tf_half_pixel_for_nearest shifts it by half a position, which the linear and cubic modes
 * (and the CPU) do not leave alone. */
static int identity(const rs_params *p, int a, double scale) {
  if (p->in_dims[a] != p->out_dims[a] || scale != 1.0) return 0;
  int c = p->cfg.coord;
  return c == WT_RESIZE_HALF_PIXEL || c == WT_RESIZE_ALIGN_CORNERS || c == WT_RESIZE_ASYMMETRIC ||
         (c == WT_RESIZE_PYTORCH_HALF_PIXEL && p->out_dims[a] > 1);
}

/* The passes of p (forward: axes last to first; grad: first to last), or WT_GPU_FAIL's value. */
static int encode_passes(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap, const rs_params *p, const double *scale,
                         int grad) {
  if (p->cfg.coord == WT_RESIZE_TF_CROP_AND_RESIZE)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "coordinate_transformation_mode tf_crop_and_resize is not on the webgpu "
                       "backend (its roi is read at run); the other modes are");
  int axes[WT_MAX_RANK], n = 0;
  for (int k = 0; k < p->rank; k++) {
    int a = grad ? k : p->rank - 1 - k;
    if (!identity(p, a, scale[a])) axes[n++] = a;
  }
  int r = wt_gpu_check_elems(wt_numel(&c->in[0]), "the input");
  if (!r) r = wt_gpu_check_elems(wt_numel(&c->out[0]), "the output");
  if (r) return r;
  if (n > cap)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%d resized axes; the webgpu backend resizes at most %d", n, cap);
  if (n == 0) {
    wt_gpu_copy_dispatch(d, wt_numel(&c->out[0]));
    return 1;
  }
  /* the dims as the passes go: from X's (forward) or dY's (grad) to the result's */
  int64_t cur[WT_MAX_RANK], most = 0;
  for (int k = 0; k < p->rank; k++) cur[k] = grad ? p->out_dims[k] : p->in_dims[k];
  for (int i = 0; i < n; i++) {
    int a = axes[i];
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < a; k++) outer *= cur[k];
    for (int k = a + 1; k < p->rank; k++) inner *= cur[k];
    d[i] = (wt_gpu_dispatch){.program = "resize", .n_bind = 2,
                             .bind = {i == 0 ? WT_GPU_IN(0) : WT_GPU_SCRATCH((i - 1) % 2),
                                      i == n - 1 ? WT_GPU_OUT(0) : WT_GPU_SCRATCH(i % 2)}};
    pass(&d[i], p, a, outer, inner, scale[a], grad);
    cur[a] = grad ? p->in_dims[a] : p->out_dims[a];
    int64_t elems = 1;
    for (int k = 0; k < p->rank; k++) elems *= cur[k];
    if (i < n - 1 && elems > most) most = elems;
  }
  r = wt_gpu_check_elems(most, "a resize's intermediate");
  if (r) return r;
  if (n > 1) c->scratch[0] = (uint64_t)most * sizeof(float);
  if (n > 2) c->scratch[1] = (uint64_t)most * sizeof(float);
  return n;
}

static int resize_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const rs_params *p = c->params;
  if (!p->is_float || c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend resizes float32 only (got %s)", wt_dtype_name(c->in[0].dtype));
  return encode_passes(c, d, cap, p, p->scale, 0);
}

/* ResizeGrad's scales: its input 3 where given (a constant: the shape pass holds its data), else
 * dY's dims over X's, as the CPU. */
static int resize_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const rs_params *p = c->params;
  double scale[WT_MAX_RANK];
  for (int k = 0; k < p->rank; k++) scale[k] = p->in_dims[k] ? (double)p->out_dims[k] / (double)p->in_dims[k] : 1.0;
  if (wt_has_input(c->in, c->n_in, 3) && wt_numel(&c->in[3]) > 0) {
    const wt_tensor *s = &c->in[3];
    if (!s->data)
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs ResizeGrad with constant scales only");
    if (wt_numel(s) != p->n_axes)
      return WT_GPU_FAIL(WT_ERR_SHAPE, "input 'scales' has %lld values; expected %d", (long long)wt_numel(s), p->n_axes);
    for (int i = 0; i < p->n_axes; i++) scale[p->axes[i]] = ((const float *)s->data)[i];
  }
  return encode_passes(c, d, cap, p, scale, 1);
}

const wt_gpu_kernel wt_gpu_kernels_resize[] = {
    {.key = {"", "Resize"}, .encode = resize_encode},
    {.key = {"", "Upsample"}, .encode = resize_encode},
    {.key = {"com.microsoft", "ResizeGrad"}, .encode = resize_grad_encode},
    {.key = {0}},
};
