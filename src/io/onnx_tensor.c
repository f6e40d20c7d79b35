/* TensorProto <-> tensors with owned data: every storage field ONNX allows (raw_data, typed
 * fields, external data), checked against dims and dtype before any byte is trusted. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "io/onnx_external.h"
#include "io/onnx_tensor.h"
#include "onnx.pb-c.h"


static int copy_typed(const Onnx__TensorProto *tp, int dtype, int64_t n, void *dst,
                      const char *name) {
  size_t have;
  switch (dtype) {
    case WT_FLOAT:
      have = tp->n_float_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->float_data, (size_t)n * 4);
      return WT_OK;
    case WT_INT32:
      have = tp->n_int32_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->int32_data, (size_t)n * 4);
      return WT_OK;
    case WT_BOOL:
      have = tp->n_int32_data;
      if ((int64_t)have != n) break;
      for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
      return WT_OK;
    case WT_FLOAT16: /* ONNX keeps each float16's bits in the low 16 bits of an int32 */
      have = tp->n_int32_data;
      if ((int64_t)have != n) break;
      for (int64_t i = 0; i < n; i++) {
        if (tp->int32_data[i] < 0 || tp->int32_data[i] > 0xffff)
          return wt_errorf(WT_ERR_PARSE, "tensor '%s' is float16 and element %lld of its int32_data is "
                           "%d: expected float16 bits, 0..65535", name, (long long)i, (int)tp->int32_data[i]);
        ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
      }
      return WT_OK;
    case WT_INT64:
      have = tp->n_int64_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->int64_data, (size_t)n * 8);
      return WT_OK;
    default:
      return wt_errorf(WT_ERR_INTERNAL, "bad dtype");
  }
  return wt_errorf(WT_ERR_PARSE, "tensor '%s' has %zu values in its %s field; its dims say %lld",
                   name, have, dtype == WT_INT64 ? "int64_data" :
                   dtype == WT_FLOAT ? "float_data" : "int32_data", (long long)n);
}

int wt_tensor_from_proto(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                         const char *what, wt_const_tensor *out) {
  const char *name = tp->name ? tp->name : "";
  memset(out, 0, sizeof *out);
  int dtype = tp->has_data_type ? tp->data_type : 0;
  if (!wt_dtype_supported(dtype))
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%s '%s' has dtype %s; webtrain supports float, int32, int64, bool and float16 "
                     "(weights)", what,
                     name, wt_dtype_name(dtype));
  if (tp->segment)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s '%s' is segmented; segments are not supported", what,
                     name);
  int64_t n;
  WT_TRY(wt_check_dims(what, name, (int)tp->n_dims, tp->dims, &n));
  size_t nbytes = (size_t)n * wt_dtype_size(dtype);
  out->name = wt_strdup(name);
  out->t.dtype = dtype;
  out->t.rank = (int)tp->n_dims;
  for (size_t i = 0; i < tp->n_dims; i++) out->t.dims[i] = tp->dims[i];
  out->t.data = nbytes ? malloc(nbytes) : NULL;
  if (!out->name || (nbytes && !out->t.data)) {
    free(out->name);
    free(out->t.data);
    memset(out, 0, sizeof *out);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory reading %s '%s' (%zu bytes)", what, name,
                     nbytes);
  }
  int rc;
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    rc = wt_external_read(tp, opts, out->t.data, nbytes, name);
  } else if (tp->has_raw_data) {
    if (tp->raw_data.len != nbytes) {
      char shape[160];
      wt_shape_str(out->t.rank, out->t.dims, shape, sizeof shape);
      rc = wt_errorf(WT_ERR_PARSE, "%s '%s' has %zu bytes of raw_data; %s %s needs %zu", what,
                     name, tp->raw_data.len, wt_dtype_name(dtype), shape, nbytes);
    } else {
      if (nbytes) memcpy(out->t.data, tp->raw_data.data, nbytes);
      rc = WT_OK;
    }
  } else {
    rc = copy_typed(tp, dtype, n, out->t.data, name);
  }
  if (rc) {
    free(out->name);
    free(out->t.data);
    memset(out, 0, sizeof *out);
  }
  return rc;
}

void wt_tensor_to_proto(const wt_const_tensor *t, Onnx__TensorProto *tp, int64_t *dims_buf) {
  onnx__tensor_proto__init(tp);
  tp->name = t->name;
  tp->has_data_type = 1;
  tp->data_type = t->t.dtype;
  tp->n_dims = (size_t)t->t.rank;
  for (int i = 0; i < t->t.rank; i++) dims_buf[i] = t->t.dims[i];
  tp->dims = dims_buf;
  tp->has_raw_data = 1;
  static uint8_t empty[1];
  tp->raw_data.len = wt_nbytes(&t->t);
  /* an empty tensor has no data pointer; protobuf-c copies len bytes from data even when 0 */
  tp->raw_data.data = t->t.data && tp->raw_data.len ? t->t.data : empty;
  if (!t->t.data) tp->raw_data.len = 0;
}


int wt_tensor_pb_read(const uint8_t *bytes, size_t len, wt_const_tensor **out) {
  *out = NULL;
  int crc = wt_pb_check(&onnx__tensor_proto__descriptor, bytes, len, "TensorProto");
  if (crc) return wt_error_context(crc, "not a valid serialized TensorProto (%zu bytes)", len);
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, bytes);
  if (!tp) return wt_errorf(WT_ERR_PARSE, "not a valid serialized TensorProto (%zu bytes)", len);
  wt_const_tensor *t = calloc(1, sizeof *t);
  int rc = t ? wt_tensor_from_proto(tp, NULL, "tensor", t)
             : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  onnx__tensor_proto__free_unpacked(tp, NULL);
  if (rc) {
    free(t);
    return rc;
  }
  *out = t;
  return WT_OK;
}

int wt_tensor_pb_write(const wt_const_tensor *t, uint8_t **out, size_t *len) {
  Onnx__TensorProto tp;
  int64_t dims[WT_MAX_RANK];
  wt_tensor_to_proto(t, &tp, dims);
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  *out = malloc(n ? n : 1);
  if (!*out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  *len = onnx__tensor_proto__pack(&tp, *out);
  return WT_OK;
}
