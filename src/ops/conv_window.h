/* Sliding-window attributes shared by Conv, ConvTranspose, MaxPool and AveragePool:
 * kernel_shape, strides, dilations, pads, auto_pad parsing and output-size arithmetic. */
#ifndef WT_OPS_CONV_WINDOW_H
#define WT_OPS_CONV_WINDOW_H

#include <stdint.h>

#include "ir/ir.h"
#include "ops/conv_geom.h"

enum { WT_AUTO_PAD_NOTSET, WT_AUTO_PAD_SAME_UPPER, WT_AUTO_PAD_SAME_LOWER, WT_AUTO_PAD_VALID };

/* webtrain normalizes every window op to 3 spatial dims (see backend/cpu/conv.h). */
#define WT_WINDOW_MAX_SPATIAL 3

typedef struct wt_window_attrs {
  int nsp;                      /* number of spatial dims, 1..3 */
  int auto_pad;
  int64_t k[3], stride[3], dil[3];
  int64_t pad_b[3], pad_e[3];   /* leading / trailing pads (resolved by the size functions) */
} wt_window_attrs;

/* Checks the input rank (>= 3, at most 3 spatial dims) of input `name` and returns nsp. */
int wt_window_nsp(const char *name, int rank, int *nsp);
/* Parses kernel_shape (required when w_kernel is NULL, else checked against the weight's
 * spatial dims w_kernel), strides, dilations (when allow_dilations), pads and auto_pad. */
int wt_window_parse(const wt_node *n, int nsp, const int64_t *w_kernel, int allow_dilations,
                    wt_window_attrs *a);
/* Conv / pooling output spatial dims for input spatial dims `in`; resolves auto_pad into
 * pad_b / pad_e. Error when a dim is unknown or the output would be empty. */
int wt_window_forward(wt_window_attrs *a, const int64_t *in, int ceil_mode, int64_t *out);
/* The 3-D normalized geometry (leading unit dims) for image dims `img` and grid dims `grid`. */
void wt_window_geom(const wt_window_attrs *a, const int64_t *img, const int64_t *grid,
                    wt_conv_geom *g);

/* Gradient-rule helpers shared by the conv and pool families. */
struct wt_grad_ctx;
/* Copies the forward node's int / ints / float / string attributes onto emitted node `dst`
 * (ORT's SrcNodeAttributes()). Errors are sticky on c. */
void wt_window_copy_attrs(struct wt_grad_ctx *c, int dst);
/* Declares value v's dtype and (possibly symbolic) shape as those of forward value `like`:
 * the value_info of a gradient whose shape its op cannot derive from its inputs. */
void wt_window_declare_like(struct wt_grad_ctx *c, int v, int like);

#endif
