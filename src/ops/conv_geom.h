/* Convolution geometry over NC[D]HW float32 tensors (kernels: backend/cpu/conv.h): every
 * spatial geometry is normalized to 3-D (1-D and 2-D get leading unit dims with kernel 1,
 * stride 1, pad 0). "img" is
 * the dense tensor side (Conv's input, ConvTranspose's output); "grid" is the set of window
 * positions (Conv's output, ConvTranspose's input): grid position o reads img position
 * o*stride - pad + k*dilation. Shared by the im2col + GEMM kernels (conv.c, conv_grad.c) and
 * the direct depthwise ones (conv_depthwise.c). */
#ifndef WT_OPS_CONV_GEOM_H
#define WT_OPS_CONV_GEOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct wt_conv_geom {
  int64_t img[3];               /* image spatial dims */
  int64_t grid[3];              /* window-position grid dims */
  int64_t k[3];                 /* kernel dims */
  int64_t stride[3], dil[3];
  int64_t pad[3];               /* leading pad per dim (the trailing pad is implied by grid) */
  /* Where a 3x3 convolution takes the Winograd path (WT_WINOGRAD_*, conv_winograd.h; 0: where
   * it wins): the caller's setting, part of the geometry since the scratch size depends on it. */
  int winograd;
} wt_conv_geom;

static inline int64_t wt_conv_img_size(const wt_conv_geom *g) {
  return g->img[0] * g->img[1] * g->img[2];
}
static inline int64_t wt_conv_grid_size(const wt_conv_geom *g) {
  return g->grid[0] * g->grid[1] * g->grid[2];
}
static inline int64_t wt_conv_kernel_size(const wt_conv_geom *g) {
  return g->k[0] * g->k[1] * g->k[2];
}
/* Grid positions o in [*lo, *hi) (within [0, n_grid)) whose image index o*s + off lies in
 * [0, n). */
static inline void wt_conv_valid_range(int64_t off, int64_t s, int64_t n, int64_t n_grid,
                                       int64_t *lo, int64_t *hi) {
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t b = n - off <= 0 ? 0 : (n - off + s - 1) / s;
  if (b > n_grid) b = n_grid;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

#endif
