/* webtrain public C API.
 *
 * Conventions: every fallible function returns an int status (0 = WT_OK) and on failure
 * wt_last_error() returns a message naming what was wrong (op, node, tensor, file) and what was
 * expected. Nothing aborts the process. Handles are opaque; each `_create` has a `_free`.
 * Pointers passed in are borrowed for the duration of the call unless stated otherwise;
 * pointers returned stay valid until the next call on the same handle or its `_free`.
 * Element types are ONNX TensorProto codes: 1 float32, 6 int32, 7 int64, 9 bool. */
#ifndef WEBTRAIN_H
#define WEBTRAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBTRAIN_VERSION "0.1.0"

typedef struct wt_session wt_session;

const char *wt_last_error(void);
/* Which vector path the kernels were built with: "wasm-simd128", "gnu-vector-128" or "scalar". */
const char *wt_simd_name(void);

/* An inference session over an ONNX model (bytes are copied; external data is not available
 * from bytes — use wt_session_create_from_file natively). */
int wt_session_create(const uint8_t *model, size_t len, wt_session **out);
int wt_session_create_from_file(const char *path, wt_session **out);
void wt_session_free(wt_session *s);

int32_t wt_session_input_count(const wt_session *s);
int32_t wt_session_output_count(const wt_session *s);
/* Names and declared types of inputs/outputs; dims < 0 are symbolic (dim name via *_dim_param). */
const char *wt_session_input_name(const wt_session *s, int32_t index);
const char *wt_session_output_name(const wt_session *s, int32_t index);
int32_t wt_session_input_dtype(const wt_session *s, int32_t index);
int32_t wt_session_input_rank(const wt_session *s, int32_t index);
int64_t wt_session_input_dim(const wt_session *s, int32_t index, int32_t axis);

/* Sets input `index` for the next run. `data` is borrowed: it must stay valid and unchanged
 * until wt_session_run returns. */
int wt_session_set_input(wt_session *s, int32_t index, int32_t dtype, int32_t rank,
                         const int64_t *dims, const void *data);
/* Runs the model on the inputs set. The plan for these input shapes is built on first use and
 * cached; a run itself allocates nothing. */
int wt_session_run(wt_session *s);
/* Output `index` of the last run: dtype, rank, dims and data stay valid until the next run. */
int wt_session_output(const wt_session *s, int32_t index, int32_t *dtype, int32_t *rank,
                      const int64_t **dims, const void **data);
/* Bytes held by the plans' arenas (activations), for memory reports. */
size_t wt_session_arena_bytes(const wt_session *s);

#ifdef __cplusplus
}
#endif

#endif
