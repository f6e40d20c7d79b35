/* ONNX Runtime's LoRA adapter file <-> named tensors, through flatbuf.c (io/adapter.h). */
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "io/adapter.h"
#include "io/flatbuf.h"

static const char IDENT[] = "TORT";
enum { A_FORMAT = 0, A_ADAPTER = 1, A_MODEL = 2, A_PARAMS = 3 };
enum { P_NAME = 0, P_DIMS = 1, P_TYPE = 2, P_DATA = 3 };

int wt_adapter_write(const wt_const_tensor *params, int n, int adapter_version, int model_version,
                     uint8_t **out, size_t *len) {
  *out = NULL;
  *len = 0;
  wt_fb_ref_t *refs = malloc(sizeof *refs * ((size_t)n + 1));
  if (!refs) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  wt_fb_builder b;
  wt_fb_builder_init(&b);
  for (int i = 0; i < n; i++) {
    const wt_const_tensor *t = &params[i];
    if (!t->name || !t->name[0] || !wt_dtype_supported(t->t.dtype) || t->t.rank < 0 || t->t.rank > WT_MAX_RANK) {
      free(refs);
      wt_fb_builder_free(&b);
      return wt_errorf(WT_ERR_INVALID_ARG, "adapter: tensor %d ('%s') has no name, an unsupported type or a bad rank",
                       i, t->name ? t->name : "");
    }
    size_t nb = wt_nbytes(&t->t);
    wt_fb_ref_t data = wt_fb_create_vector_aligned(&b, t->t.data, (uint32_t)nb, 1, 8);
    wt_fb_ref_t dims = wt_fb_create_vector(&b, t->t.dims, (uint32_t)t->t.rank, 8);
    wt_fb_ref_t name = wt_fb_create_string(&b, t->name);
    int32_t type = t->t.dtype;
    wt_fb_start_table(&b);
    wt_fb_add_ref(&b, P_NAME, name);
    wt_fb_add_ref(&b, P_DIMS, dims);
    wt_fb_add_scalar(&b, P_TYPE, &type, 4);
    wt_fb_add_ref(&b, P_DATA, data);
    refs[i] = wt_fb_end_table(&b);
  }
  wt_fb_ref_t vec = wt_fb_create_ref_vector(&b, refs, (uint32_t)n);
  int32_t fmt = WT_ADAPTER_FORMAT_VERSION, av = adapter_version, mv = model_version;
  wt_fb_start_table(&b);
  wt_fb_add_scalar(&b, A_FORMAT, &fmt, 4);
  wt_fb_add_scalar(&b, A_ADAPTER, &av, 4);
  wt_fb_add_scalar(&b, A_MODEL, &mv, 4);
  wt_fb_add_ref(&b, A_PARAMS, vec);
  wt_fb_ref_t root = wt_fb_end_table(&b);
  free(refs);
  int rc = wt_fb_finish(&b, root, IDENT, out, len);
  wt_fb_builder_free(&b);
  return rc;
}

void wt_adapter_free(wt_const_tensor *p, int n) {
  for (int i = 0; p && i < n; i++) {
    free(p[i].name);
    free(p[i].t.data);
  }
  free(p);
}

static int read_param(const wt_fb_reader *r, const wt_fb_table *t, wt_const_tensor *p) {
  const char *name;
  uint32_t nlen;
  WT_TRY(wt_fb_string(r, t, P_NAME, "adapter parameter name", &name, &nlen));
  if (!name || !nlen) return wt_errorf(WT_ERR_INVALID_ARG, "adapter: a parameter has no name");
  wt_fb_vec dims, data;
  int has_dims, has_data, has_type;
  uint64_t type = 0;
  WT_TRY(wt_fb_vector(r, t, P_DIMS, 8, "adapter parameter dims", &dims, &has_dims));
  WT_TRY(wt_fb_scalar(r, t, P_TYPE, 4, "adapter parameter data_type", &type, &has_type));
  WT_TRY(wt_fb_vector(r, t, P_DATA, 1, "adapter parameter raw_data", &data, &has_data));
  if (dims.n > WT_MAX_RANK)
    return wt_errorf(WT_ERR_INVALID_ARG, "adapter: parameter '%s' has %u dims (at most %d)", name, dims.n, WT_MAX_RANK);
  if (!wt_dtype_supported((int)type))
    return wt_errorf(WT_ERR_INVALID_ARG, "adapter: parameter '%s' has unsupported data_type %d", name, (int)(int32_t)type);
  p->t.dtype = (int)type;
  p->t.rank = (int)dims.n;
  for (uint32_t i = 0; i < dims.n; i++) {
    int64_t d = (int64_t)wt_fb_u64(r->p + dims.pos + 8 * i);
    if (d < 0 || d > ((int64_t)1 << 40))
      return wt_errorf(WT_ERR_INVALID_ARG, "adapter: parameter '%s' has dimension %lld", name, (long long)d);
    p->t.dims[i] = d;
  }
  /* the product of the non-zero dims bounded, so that no partial product overflows */
  uint64_t n = 1, nz = 1;
  for (int i = 0; i < p->t.rank; i++) {
    uint64_t d = (uint64_t)p->t.dims[i];
    if (d && nz > (((uint64_t)1 << 40) / d))
      return wt_errorf(WT_ERR_INVALID_ARG, "adapter: parameter '%s' is too large", name);
    nz *= d ? d : 1;
    n *= d;
  }
  if (n * (uint64_t)wt_dtype_size(p->t.dtype) != data.n)
    return wt_errorf(WT_ERR_INVALID_ARG, "adapter: parameter '%s' holds %u bytes of data; its dims and type need %llu",
                     name, data.n, (unsigned long long)(n * (uint64_t)wt_dtype_size(p->t.dtype)));
  p->name = wt_strndup(name, nlen);
  p->t.data = malloc(data.n ? data.n : 1);
  if (!p->name || !p->t.data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(p->t.data, r->p + data.pos, data.n);
  return WT_OK;
}

int wt_adapter_read(const uint8_t *bytes, size_t len, wt_const_tensor **params, int *n_params,
                    int *adapter_version, int *model_version) {
  *params = NULL;
  *n_params = 0;
  wt_fb_reader r = {.p = bytes, .len = len, .prefix = "adapter"};
  wt_fb_table root, t;
  uint64_t fmt = 0, av = 0, mv = 0;
  int present, has_params;
  if (!bytes || wt_fb_root(&r, IDENT, &root))
    return wt_errorf(WT_ERR_INVALID_ARG, "adapter: not an ONNX Runtime adapter file (.onnx_adapter: a flatbuffer "
                     "with identifier 'TORT'), %zu bytes", len);
  WT_TRY(wt_fb_scalar(&r, &root, A_FORMAT, 4, "adapter format_version", &fmt, &present));
  if ((int32_t)fmt != WT_ADAPTER_FORMAT_VERSION)
    return wt_errorf(WT_ERR_UNSUPPORTED, "adapter: format version %d; webtrain reads version %d",
                     (int)(int32_t)fmt, WT_ADAPTER_FORMAT_VERSION);
  WT_TRY(wt_fb_scalar(&r, &root, A_ADAPTER, 4, "adapter adapter_version", &av, &present));
  WT_TRY(wt_fb_scalar(&r, &root, A_MODEL, 4, "adapter model_version", &mv, &present));
  wt_fb_vec v;
  WT_TRY(wt_fb_vector(&r, &root, A_PARAMS, 4, "adapter parameters", &v, &has_params));
  wt_const_tensor *p = calloc((size_t)v.n + 1, sizeof *p);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  int rc = WT_OK;
  uint32_t i = 0;
  for (; i < v.n && rc == WT_OK; i++) {
    rc = wt_fb_vec_table(&r, &v, i, "adapter parameter", &t);
    if (rc == WT_OK) rc = read_param(&r, &t, &p[i]);
  }
  if (rc) {
    wt_adapter_free(p, (int)i);
    return rc;
  }
  *params = p;
  *n_params = (int)v.n;
  if (adapter_version) *adapter_version = (int)(int32_t)av;
  if (model_version) *model_version = (int)(int32_t)mv;
  return WT_OK;
}
