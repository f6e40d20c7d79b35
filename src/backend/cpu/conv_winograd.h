/* Winograd F(2x2, 3x3) convolution (Lavin and Gray, "Fast Algorithms for Convolutional Neural
 * Networks", 2015) for 2-D 3x3 convolutions with stride 1, dilation 1, pad 1 and one group: the
 * Conv forward, its dX (a 3x3 "same" convolution of dY with the flipped, transposed kernels) and
 * its dW. Each 2x2 output tile is A^T [U (.) V] A with U = G g G^T (4x4 per kernel) and V =
 * B^T d B (4x4 per input tile): the 16 positions of the 4x4 domain are 16 GEMMs over channels,
 * with 16/36 of the multiply-adds of im2col + GEMM. The results equal im2col + GEMM's to float
 * rounding (the transforms' entries are 0, +-1 and +-1/2), not bit for bit; within one build they
 * are the same at any thread count (transforms are per channel, the GEMMs are wt_sgemm_batch's).
 * backend/cpu/conv.c and conv_grad.c take this path where wt_conv_winograd_fits says it wins. */
#ifndef WT_KERNELS_CONV_WINOGRAD_H
#define WT_KERNELS_CONV_WINOGRAD_H

#include <stddef.h>
#include <stdint.h>

#include "ops/conv_geom.h"

/* Whether this convolution (x [N, C, H, W], w [M, C, 3, 3]) takes the Winograd path: the
 * geometry above (a float16 W never does: its callers check), and enough tiles and channels for
 * the GEMMs to outweigh the transforms (measured with tests/bench/conv_bench.c). */
int wt_conv_winograd_fits(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group);
/* wt_conv_geom.winograd, for tests and benchmarks: WT_WINOGRAD_AUTO (where it wins: the
 * default, 0 so that a geometry built without it gets it), WT_WINOGRAD_OFF (im2col + GEMM
 * everywhere, the path it replaces) or WT_WINOGRAD_ALWAYS (wherever the geometry allows,
 * however small). */
enum { WT_WINOGRAD_AUTO = 0, WT_WINOGRAD_OFF = 1, WT_WINOGRAD_ALWAYS = 2 };
/* The setting the environment variable WT_WINOGRAD spells: "0" im2col + GEMM only, "2"
 * wherever the geometry allows, anything else (or NULL) where it wins. */
static inline int wt_conv_winograd_mode(const char *env) {
  if (env && env[0] == '0' && !env[1]) return WT_WINOGRAD_OFF;
  if (env && env[0] == '2' && !env[1]) return WT_WINOGRAD_ALWAYS;
  return WT_WINOGRAD_AUTO;
}
/* Scratch floats of the forward and of the gradient (both dX and dW) where this convolution
 * takes the Winograd path (wt_conv_winograd_fits), 0 where it does not. */
size_t wt_conv_winograd_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               int64_t group);

/* y [N, M, H, W] = conv(x, w) + bias (bias [M] or NULL). */
void wt_conv_winograd_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                              const float *x, const float *w, const float *bias, float *y,
                              float *scratch);
/* dx [N, C, H, W] and / or dw [M, C, 3, 3] (either may be NULL) from dy [N, M, H, W]; both are
 * overwritten. */
void wt_conv_winograd_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                           const float *dy, const float *x, const float *w, float *dx, float *dw,
                           float *scratch);

#endif
