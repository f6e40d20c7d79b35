/* Sliding-window attribute parsing and output-size arithmetic (see conv_window.h). */
#include "ops/conv_window.h"

#include <stdlib.h>
#include <string.h>

#include "grad/grad.h"
#include "base/status.h"

int wt_window_nsp(const char *name, int rank, int *nsp) {
  if (rank < 3)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index 0) has rank %d; expected rank >= 3 "
                     "(N, C, spatial...)", name, rank);
  if (rank - 2 > WT_WINDOW_MAX_SPATIAL)
    return wt_errorf(WT_ERR_UNSUPPORTED, "input '%s' (index 0) has %d spatial dims; webtrain "
                     "supports 1 to %d", name, rank - 2, WT_WINDOW_MAX_SPATIAL);
  *nsp = rank - 2;
  return WT_OK;
}

/* Reads an ints attribute of exactly `count` values >= min_value into dst (dflt when absent). */
static int read_ints(const wt_node *n, const char *name, int count, int64_t min_value,
                     int64_t dflt, int64_t *dst) {
  const int64_t *v;
  int len = wt_attr_ints(n, name, &v);
  if (len < 0) {
    for (int i = 0; i < count; i++) dst[i] = dflt;
    return WT_OK;
  }
  if (len != count)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute '%s' has %d values; expected %d", name, len,
                     count);
  for (int i = 0; i < count; i++) {
    if (v[i] < min_value)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute '%s' value %d is %lld; expected >= %lld",
                       name, i, (long long)v[i], (long long)min_value);
    dst[i] = v[i];
  }
  return WT_OK;
}

int wt_window_parse(const wt_node *n, int nsp, const int64_t *w_kernel, int allow_dilations,
                    wt_window_attrs *a) {
  memset(a, 0, sizeof *a);
  a->nsp = nsp;
  const int64_t *ks;
  int nk = wt_attr_ints(n, "kernel_shape", &ks);
  if (nk < 0 && !w_kernel)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'kernel_shape' is missing; it is required");
  if (nk >= 0) {
    WT_TRY(read_ints(n, "kernel_shape", nsp, 1, 1, a->k));
    if (w_kernel)
      for (int i = 0; i < nsp; i++)
        if (w_kernel[i] >= 0 && a->k[i] != w_kernel[i])
          return wt_errorf(WT_ERR_SHAPE, "attribute 'kernel_shape'[%d] is %lld but the weight's "
                           "spatial dim %d is %lld; expected them equal", i, (long long)a->k[i],
                           i, (long long)w_kernel[i]);
  } else {
    for (int i = 0; i < nsp; i++) {
      if (w_kernel[i] < 1)
        return wt_errorf(WT_ERR_SHAPE, "weight spatial dim %d is %lld; expected >= 1", i,
                         (long long)w_kernel[i]);
      a->k[i] = w_kernel[i];
    }
  }
  WT_TRY(read_ints(n, "strides", nsp, 1, 1, a->stride));
  if (allow_dilations) {
    WT_TRY(read_ints(n, "dilations", nsp, 1, 1, a->dil));
  } else {
    if (wt_node_attr(n, "dilations"))
      return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'dilations' is not supported here");
    for (int i = 0; i < nsp; i++) a->dil[i] = 1;
  }
  int64_t pads[6];
  WT_TRY(read_ints(n, "pads", 2 * nsp, 0, 0, pads));
  for (int i = 0; i < nsp; i++) {
    a->pad_b[i] = pads[i];
    a->pad_e[i] = pads[nsp + i];
  }
  const char *ap = wt_attr_string(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0') a->auto_pad = WT_AUTO_PAD_NOTSET;
  else if (strcmp(ap, "SAME_UPPER") == 0) a->auto_pad = WT_AUTO_PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0) a->auto_pad = WT_AUTO_PAD_SAME_LOWER;
  else if (strcmp(ap, "VALID") == 0) a->auto_pad = WT_AUTO_PAD_VALID;
  else
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'auto_pad' is '%s'; expected NOTSET, "
                     "SAME_UPPER, SAME_LOWER or VALID", ap);
  return WT_OK;
}

int wt_window_forward(wt_window_attrs *a, const int64_t *in, int ceil_mode, int64_t *out) {
  for (int i = 0; i < a->nsp; i++) {
    if (in[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "spatial dim %d of the input is unknown; expected a fixed "
                       "size", i);
    int64_t dk = (a->k[i] - 1) * a->dil[i] + 1, s = a->stride[i], o;
    if (a->auto_pad == WT_AUTO_PAD_SAME_UPPER || a->auto_pad == WT_AUTO_PAD_SAME_LOWER) {
      o = (in[i] + s - 1) / s;
      int64_t total = (o - 1) * s + dk - in[i];
      if (total < 0) total = 0;
      /* An odd total puts the extra pad at the end for SAME_UPPER, the start for SAME_LOWER. */
      a->pad_b[i] = a->auto_pad == WT_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
      a->pad_e[i] = total - a->pad_b[i];
    } else {
      if (a->auto_pad == WT_AUTO_PAD_VALID) a->pad_b[i] = a->pad_e[i] = 0;
      int64_t span = in[i] + a->pad_b[i] + a->pad_e[i] - dk;
      if (span < 0)
        return wt_errorf(WT_ERR_SHAPE, "spatial dim %d: input size %lld plus pads %lld+%lld is "
                         "smaller than the dilated kernel %lld", i, (long long)in[i],
                         (long long)a->pad_b[i], (long long)a->pad_e[i], (long long)dk);
      o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      /* A ceil_mode window must start inside the input or the leading pad. */
      if (ceil_mode && (o - 1) * s >= in[i] + a->pad_b[i]) o--;
    }
    if (o < 1)
      return wt_errorf(WT_ERR_SHAPE, "spatial dim %d: output size would be %lld; expected >= 1",
                       i, (long long)o);
    out[i] = o;
  }
  return WT_OK;
}

void wt_window_geom(const wt_window_attrs *a, const int64_t *img, const int64_t *grid,
                    wt_conv_geom *g) {
  int lead = 3 - a->nsp;
  for (int d = 0; d < 3; d++) {
    int i = d - lead;
    if (i < 0) {
      g->img[d] = g->grid[d] = g->k[d] = g->stride[d] = g->dil[d] = 1;
      g->pad[d] = 0;
    } else {
      g->img[d] = img[i];
      g->grid[d] = grid[i];
      g->k[d] = a->k[i];
      g->stride[d] = a->stride[i];
      g->dil[d] = a->dil[i];
      g->pad[d] = a->pad_b[i];
    }
  }
}

void wt_window_copy_attrs(wt_grad_ctx *c, int dst) { wt_grad_copy_attrs(c, dst, NULL, 0); }

void wt_window_declare_like(wt_grad_ctx *c, int v, int like) {
  if (c->rc || v < 0 || like < 0) return;
  int rc = wt_value_copy_type(c->g, v, c->g, like, -1);
  if (rc) wt_grad_fail(c, rc, "out of memory");
}
