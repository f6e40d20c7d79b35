/* The bad-input suite (issue 9): malformed and hostile models, tensors, checkpoints and calls,
 * each with the status and the exact error text expected. Nothing may crash, leak or trip a
 * sanitizer. Hostile ONNX models are built at run time from protobuf-c messages (a small valid
 * base model, then one defect per case); hostile checkpoints are cut from generated artifacts;
 * the fuzzers' regression inputs are committed under tests/bad_input/files/ (see its README).
 *
 * A case returns a status; the table says which status and which substring of wt_last_error()
 * are expected (code 0: the call must succeed, e.g. a fuzzer crash that now works). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/checkpoint.h"
#include "io/onnx_io.h"
#include "onnx.pb-c.h"
#include "runtime/planner.h"
#include "webtrain.h"

#define FILES WT_SOURCE_DIR "/tests/bad_input/files/"

/* Under AddressSanitizer, an allocation the machine cannot satisfy returns NULL (as malloc does
 * natively and in wasm) instead of aborting: the huge-batch case checks the error it causes. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ---- a per-case arena: every builder allocation is freed after the case ------------------ */

static void **g_allocs;
static int g_n_allocs, g_cap_allocs;

static void *A(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) abort();
  if (g_n_allocs == g_cap_allocs) {
    g_cap_allocs = g_cap_allocs ? 2 * g_cap_allocs : 64;
    g_allocs = realloc(g_allocs, sizeof *g_allocs * (size_t)g_cap_allocs);
    if (!g_allocs) abort();
  }
  g_allocs[g_n_allocs++] = p;
  return p;
}

static void arena_reset(void) {
  for (int i = 0; i < g_n_allocs; i++) free(g_allocs[i]);
  g_n_allocs = 0;
}

static char *S(const char *s) {
  char *p = A(strlen(s) + 1);
  memcpy(p, s, strlen(s) + 1);
  return p;
}

/* ---- protobuf builders ------------------------------------------------------------------- */

static Onnx__ValueInfoProto *value_info(const char *name, int dtype, int rank, const int64_t *dims,
                                        const char *const *params) {
  Onnx__ValueInfoProto *vi = A(sizeof *vi);
  onnx__value_info_proto__init(vi);
  vi->name = S(name);
  Onnx__TypeProto *tp = A(sizeof *tp);
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = A(sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = dtype;
  if (rank >= 0) {
    Onnx__TensorShapeProto *sh = A(sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = A(sizeof *sh->dim * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = A(sizeof *d);
      onnx__tensor_shape_proto__dimension__init(d);
      if (params && params[i]) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = S(params[i]);
      } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
      }
      sh->dim[i] = d;
    }
    tt->shape = sh;
  }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  return vi;
}

/* A tensor with raw_data (data may be NULL: zeros). */
static Onnx__TensorProto *tensor(const char *name, int dtype, int rank, const int64_t *dims,
                                 const void *data) {
  Onnx__TensorProto *t = A(sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = S(name);
  t->has_data_type = 1;
  t->data_type = dtype;
  t->n_dims = (size_t)rank;
  t->dims = A(sizeof(int64_t) * (size_t)(rank + 1));
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    t->dims[i] = dims[i];
    n *= dims[i];
  }
  size_t es = dtype == WT_INT64 ? 8 : dtype == WT_BOOL ? 1 : dtype == WT_FLOAT16 ? 2 : 4;
  t->has_raw_data = 1;
  t->raw_data.len = (size_t)n * es;
  t->raw_data.data = A(t->raw_data.len);
  if (data) memcpy(t->raw_data.data, data, t->raw_data.len);
  return t;
}

static Onnx__NodeProto *node(const char *op, const char *name, int n_in, const char *const *ins,
                             int n_out, const char *const *outs) {
  Onnx__NodeProto *n = A(sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = S(op);
  n->name = S(name);
  n->domain = S("");
  n->n_input = (size_t)n_in;
  n->input = A(sizeof(char *) * (size_t)(n_in + 1));
  for (int i = 0; i < n_in; i++) n->input[i] = S(ins[i]);
  n->n_output = (size_t)n_out;
  n->output = A(sizeof(char *) * (size_t)(n_out + 1));
  for (int i = 0; i < n_out; i++) n->output[i] = S(outs[i]);
  return n;
}

static Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type) {
  Onnx__AttributeProto **a = A(sizeof *a * (n->n_attribute + 2));
  if (n->n_attribute) memcpy(a, n->attribute, sizeof *a * n->n_attribute);
  a[n->n_attribute] = A(sizeof **a);
  onnx__attribute_proto__init(a[n->n_attribute]);
  a[n->n_attribute]->name = S(name);
  if (type) {
    a[n->n_attribute]->has_type = 1;
    a[n->n_attribute]->type = type;
  }
  n->attribute = a;
  return a[n->n_attribute++];
}

/* Appends p to a protobuf-c pointer array (n, arr). */
#define PUSH(n, arr, p)                                                          \
  do {                                                                           \
    void *np_ = A(sizeof *(arr) * ((n) + 2));                                    \
    if (n) memcpy(np_, (arr), sizeof *(arr) * (n));                              \
    (arr) = np_;                                                                 \
    (arr)[(n)++] = (p);                                                          \
  } while (0)

typedef struct model {
  Onnx__ModelProto m;
  Onnx__GraphProto g;
  Onnx__OperatorSetIdProto op;
} model;

static const float W_DATA[12] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, 0.8f, -0.9f, 1.0f, 0.2f, -0.1f};
static const float B_DATA[3] = {0.01f, 0.02f, -0.03f};

/* The base model: Y[batch,3] = MatMul(X[batch,4], W[4,3]) + B[3]; valid and trainable. */
static model *base_model(void) {
  model *b = A(sizeof *b);
  onnx__model_proto__init(&b->m);
  onnx__graph_proto__init(&b->g);
  onnx__operator_set_id_proto__init(&b->op);
  b->m.has_ir_version = 1;
  b->m.ir_version = 8;
  b->m.producer_name = S("bad_input");
  b->op.domain = S("");
  b->op.has_version = 1;
  b->op.version = 17;
  PUSH(b->m.n_opset_import, b->m.opset_import, &b->op);
  b->m.graph = &b->g;
  b->g.name = S("base");
  static const char *batch[2] = {"batch", NULL};
  PUSH(b->g.n_input, b->g.input, value_info("X", WT_FLOAT, 2, (int64_t[]){0, 4}, batch));
  PUSH(b->g.n_output, b->g.output, value_info("Y", WT_FLOAT, 2, (int64_t[]){0, 3}, batch));
  PUSH(b->g.n_initializer, b->g.initializer, tensor("W", WT_FLOAT, 2, (int64_t[]){4, 3}, W_DATA));
  PUSH(b->g.n_initializer, b->g.initializer, tensor("B", WT_FLOAT, 1, (int64_t[]){3}, B_DATA));
  PUSH(b->g.n_node, b->g.node, node("MatMul", "mm", 2, (const char *[]){"X", "W"}, 1, (const char *[]){"H"}));
  PUSH(b->g.n_node, b->g.node, node("Add", "add", 2, (const char *[]){"H", "B"}, 1, (const char *[]){"Y"}));
  return b;
}

static uint8_t *pack(const model *b, size_t *len) {
  *len = onnx__model_proto__get_packed_size(&b->m);
  uint8_t *bytes = A(*len);
  onnx__model_proto__pack(&b->m, bytes);
  return bytes;
}

static int read_model(const model *b) {
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_graph *g = NULL;
  int rc = wt_onnx_read(bytes, len, NULL, &g);
  wt_graph_free(g);
  return rc;
}

/* Creates a session and runs it once on X (float [rows, cols] unless dtype/rank say otherwise). */
static int run_model_x(const model *b, int dtype, int rank, const int64_t *dims, float fill) {
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_session *s = NULL;
  int rc = wt_session_create(bytes, len, &s);
  if (rc) return rc;
  int64_t n = 1; /* hostile shapes: the call must fail before reading data; 4096 is plenty */
  for (int i = 0; i < rank; i++) n = dims[i] < 0 || dims[i] > 4096 || n * dims[i] > 4096 ? 4096 : n * dims[i];
  float *x = A(sizeof(float) * (size_t)(n + 1) * 2);
  for (int64_t i = 0; i < n; i++) x[i] = fill;
  rc = wt_session_set_input(s, 0, dtype, rank, dims, x);
  if (!rc) rc = wt_session_run(s);
  wt_session_free(s);
  return rc;
}

static int run_model(const model *b) { return run_model_x(b, WT_FLOAT, 2, (int64_t[]){2, 4}, 0.5f); }

/* Runs a model file: every declared input gets its declared shape (symbolic dims 2), float
 * inputs hold `fill`, the others zeros. */
static int run_file(const char *path, float fill) {
  uint8_t *bytes;
  size_t len;
  WT_TRY(wt_read_file(path, &bytes, &len));
  wt_graph *g = NULL;
  int rc = wt_onnx_read(bytes, len, NULL, &g);
  wt_session *s = NULL;
  if (!rc) rc = wt_session_create(bytes, len, &s);
  for (int k = 0; !rc && k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    int64_t dims[WT_MAX_RANK], n = 1;
    int rank = v->rank < 0 ? 1 : v->rank;
    for (int i = 0; i < rank; i++) {
      dims[i] = v->rank < 0 || v->dims[i] < 0 ? 2 : v->dims[i];
      n *= dims[i];
    }
    void *data = A((size_t)n * 8 + 8);
    if (v->dtype == WT_FLOAT || !v->dtype)
      for (int64_t i = 0; i < n; i++) ((float *)data)[i] = fill;
    rc = wt_session_set_input(s, k, v->dtype ? v->dtype : WT_FLOAT, rank, dims, data);
  }
  if (!rc) rc = wt_session_run(s);
  wt_session_free(s);
  wt_graph_free(g);
  free(bytes);
  return rc;
}

/* ---- artifacts of the base model, for the training cases ---------------------------------- */

static wt_artifacts g_art;   /* MSE + AdamW over W and B */

static int gen(const model *b, const wt_artifacts_opts *o) {
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts a;
  int rc = wt_generate_artifacts(bytes, len, o, &a);
  if (!rc) wt_artifacts_free(&a);
  return rc;
}

static int gen_with(const char *const *req, int n_req, const char *const *frozen, int n_frozen) {
  wt_artifacts_opts o = {.requires_grad = req, .n_requires_grad = n_req, .frozen_params = frozen,
                         .n_frozen_params = n_frozen, .loss = {.type = WT_LOSS_TYPE_MSE},
                         .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(base_model(), &o);
}

static int load_ckpt(const uint8_t *bytes, size_t len) {
  wt_checkpoint *c = NULL;
  int rc = wt_checkpoint_read(bytes, len, &c);
  wt_checkpoint_free(c);
  if (rc) return rc;
  wt_state *s = NULL;
  rc = wt_state_load(bytes, len, &s);
  wt_state_free(s);
  return rc;
}

/* A copy of the generated checkpoint with one edit. */
static uint8_t *ckpt_copy(size_t *len) {
  *len = g_art.checkpoint.len;
  uint8_t *c = A(*len);
  memcpy(c, g_art.checkpoint.data, *len);
  return c;
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

/* Where field `id` of the table at `table` is stored (0 when absent). */
static uint32_t fb_field(const uint8_t *b, uint32_t table, int id) {
  uint32_t vt = table - rd32(b + table);
  uint16_t vt_len = (uint16_t)(b[vt] | b[vt + 1] << 8);
  if (4 + 2 * id >= vt_len) return 0;
  uint16_t off = (uint16_t)(b[vt + 4 + 2 * id] | b[vt + 5 + 2 * id] << 8);
  return off ? table + off : 0;
}

typedef struct train_run {
  wt_state *s;
  wt_module *m;
  wt_optimizer *o;
} train_run;

static void close_run(train_run *r) {
  wt_optimizer_free(r->o);
  wt_module_free(r->m);
  wt_state_free(r->s);
  memset(r, 0, sizeof *r);
}

static int open_run(train_run *r, const wt_artifacts *a) {
  memset(r, 0, sizeof *r);
  WT_TRY(wt_state_load(a->checkpoint.data, a->checkpoint.len, &r->s));
  WT_TRY(wt_module_create(r->s, a->training_model.data, a->training_model.len, a->eval_model.data,
                          a->eval_model.len, &r->m));
  return wt_optimizer_create(r->s, a->optimizer_model.data, a->optimizer_model.len, &r->o);
}

/* One train step on x [rows,4] and target [rows,3]. */
static int train_step(train_run *r, int64_t rows, int64_t cols, float xfill, int dtype) {
  float *x = A(sizeof(float) * (size_t)(rows * cols + 1)), *t = A(sizeof(float) * (size_t)(rows * 3 + 1));
  for (int64_t i = 0; i < rows * cols; i++) x[i] = xfill;
  WT_TRY(wt_module_set_input(r->m, 0, 0, dtype, 2, (int64_t[]){rows, cols}, x));
  WT_TRY(wt_module_set_input(r->m, 0, 1, WT_FLOAT, 2, (int64_t[]){rows, 3}, t));
  return wt_module_train_step(r->m);
}

/* ==== the cases ============================================================================ */

/* -- ONNX bytes -- */
static int c_empty_model(void) {
  wt_graph *g = NULL;
  int rc = wt_onnx_read((const uint8_t *)"", 0, NULL, &g);
  wt_graph_free(g);
  return rc;
}
static int c_garbage_model(void) {
  /* graph (field 7) announced with 16 bytes, 6 present */
  static const uint8_t junk[] = {0x3a, 0x10, 0x0a, 0x01, 0x58, 0x12, 0x01, 0x59};
  wt_graph *g = NULL;
  return wt_onnx_read(junk, sizeof junk, NULL, &g);
}
static int c_truncated_model(void) {
  size_t len;
  uint8_t *b = pack(base_model(), &len);
  wt_graph *g = NULL;
  return wt_onnx_read(b, len - 7, NULL, &g);
}
static int c_truncated_golden(void) {
  uint8_t *b;
  size_t len;
  WT_TRY(wt_read_file(WT_SOURCE_DIR "/tests/golden/cases/regression_mse_adamw/model.onnx", &b, &len));
  wt_graph *g = NULL;
  int rc = wt_onnx_read(b, len / 2, NULL, &g);
  wt_graph_free(g);
  free(b);
  return rc;
}
/* Every single-bit flip of the base model: each either loads or fails with a message. */
static int c_bitflips_model(void) {
  size_t len;
  uint8_t *b = pack(base_model(), &len);
  int failures = 0;
  for (size_t i = 0; i < len; i++)
    for (int bit = 0; bit < 8; bit++) {
      b[i] ^= (uint8_t)(1u << bit);
      wt_graph *g = NULL;
      int rc = wt_onnx_read(b, len, NULL, &g);
      if (rc && !wt_last_error()[0]) failures++;
      if (!rc) {
        wt_session *s = NULL;
        if (wt_session_create(b, len, &s) == WT_OK) {
          int64_t dims[2] = {2, 4};
          float x[8] = {0};
          if (wt_session_set_input(s, 0, WT_FLOAT, 2, dims, x) == WT_OK) (void)wt_session_run(s);
          wt_session_free(s);
        }
      }
      wt_graph_free(g);
      b[i] ^= (uint8_t)(1u << bit);
    }
  return failures ? wt_errorf(WT_ERR_INTERNAL, "%d flips failed without a message", failures) : WT_OK;
}
static int c_no_graph(void) {
  model *b = base_model();
  b->m.graph = NULL;
  return read_model(b);
}
static int c_local_functions(void) {
  model *b = base_model();
  Onnx__FunctionProto *f = A(sizeof *f);
  onnx__function_proto__init(f);
  f->name = S("f");
  f->domain = S("custom");
  PUSH(b->m.n_functions, b->m.functions, f);
  return read_model(b);
}
static int c_node_no_op_type(void) {
  model *b = base_model();
  b->g.node[0]->op_type = S("");
  return read_model(b);
}
static int c_node_65_inputs(void) {
  model *b = base_model();
  const char *ins[65];
  for (int i = 0; i < 65; i++) ins[i] = "X";
  b->g.node[1] = node("Sum", "sum", 65, ins, 1, (const char *[]){"Y"});
  return read_model(b);
}
static int c_duplicate_node_output(void) {
  model *b = base_model();
  PUSH(b->g.n_node, b->g.node, node("Relu", "again", 1, (const char *[]){"X"}, 1, (const char *[]){"H"}));
  return read_model(b);
}
static int c_node_output_is_input(void) {
  model *b = base_model();
  PUSH(b->g.n_node, b->g.node, node("Relu", "clobber", 1, (const char *[]){"H"}, 1, (const char *[]){"X"}));
  return read_model(b);
}
static int c_node_output_is_initializer(void) {
  model *b = base_model();
  PUSH(b->g.n_node, b->g.node, node("Relu", "clobber", 1, (const char *[]){"H"}, 1, (const char *[]){"W"}));
  return read_model(b);
}
static int c_duplicate_initializer(void) {
  model *b = base_model();
  PUSH(b->g.n_initializer, b->g.initializer, tensor("W", WT_FLOAT, 1, (int64_t[]){3}, B_DATA));
  return read_model(b);
}
static int c_initializer_no_name(void) {
  model *b = base_model();
  b->g.initializer[1]->name = S("");
  return read_model(b);
}
static int c_duplicate_input(void) {
  model *b = base_model();
  PUSH(b->g.n_input, b->g.input, value_info("X", WT_FLOAT, 2, (int64_t[]){1, 4}, NULL));
  return read_model(b);
}
static int c_input_no_name(void) {
  model *b = base_model();
  b->g.input[0]->name = S("");
  return read_model(b);
}
static int c_output_no_name(void) {
  model *b = base_model();
  b->g.output[0]->name = S("");
  return read_model(b);
}
static int c_output_not_produced(void) {
  model *b = base_model();
  PUSH(b->g.n_output, b->g.output, value_info("ghost", WT_FLOAT, 1, (int64_t[]){3}, NULL));
  return read_model(b);
}
static int c_cycle(void) {
  model *b = base_model();
  /* H = MatMul(X, W); Y = Add(H, B) becomes H = MatMul(X, Z); Z = Relu(Y): a cycle H->Y->Z->H */
  b->g.node[0]->input[1] = S("Z");
  PUSH(b->g.n_node, b->g.node, node("Relu", "loop", 1, (const char *[]){"Y"}, 1, (const char *[]){"Z"}));
  return read_model(b);
}
static int c_self_loop(void) {
  model *b = base_model();
  b->g.node[1]->input[1] = S("Y");
  return read_model(b);
}
static int c_undefined_input(void) {
  model *b = base_model();
  b->g.node[1]->input[1] = S("nowhere");
  return read_model(b);
}
static int c_init_dtype_double(void) {
  model *b = base_model();
  b->g.initializer[1]->data_type = 11; /* DOUBLE */
  return read_model(b);
}
static int c_init_dtype_string(void) {
  model *b = base_model();
  b->g.initializer[1]->data_type = 8; /* STRING */
  return read_model(b);
}
static int c_input_dtype_double(void) {
  model *b = base_model();
  b->g.input[0]->type->tensor_type->elem_type = 11; /* DOUBLE */
  return read_model(b);
}
/* float16 where no op reads it: a graph input straight into MatMul (not through a Cast of a
 * weight), a bias into Add, a weight through a Cast whose reader is Add */
static int c_input_float16_matmul(void) {
  model *b = base_model();
  b->g.input[0]->type->tensor_type->elem_type = WT_FLOAT16;
  return run_model_x(b, WT_FLOAT16, 2, (int64_t[]){2, 4}, 0.0f);
}
static int c_init_float16_add(void) {
  model *b = base_model();
  b->g.initializer[1] = tensor("B", WT_FLOAT16, 1, (int64_t[]){3}, NULL);
  return run_model(b);
}
static int c_init_float16_raw_short(void) {
  model *b = base_model();
  b->g.initializer[0] = tensor("W", WT_FLOAT16, 2, (int64_t[]){4, 3}, NULL);
  b->g.initializer[0]->raw_data.len -= 4;
  return read_model(b);
}
static int c_init_float16_int32_data(int count, int32_t value) {
  model *b = base_model();
  Onnx__TensorProto *t = tensor("W", WT_FLOAT16, 2, (int64_t[]){4, 3}, NULL);
  t->has_raw_data = 0;
  t->n_int32_data = (size_t)count;
  t->int32_data = A(sizeof(int32_t) * (size_t)(count + 1));
  for (int i = 0; i < count; i++) t->int32_data[i] = i == 5 ? value : 0x3c00;
  b->g.initializer[0] = t;
  return read_model(b);
}
static int c_init_float16_int32_count(void) { return c_init_float16_int32_data(11, 0x3c00); }
static int c_init_float16_int32_range(void) { return c_init_float16_int32_data(12, 70000); }
static int c_input_rank_9(void) {
  model *b = base_model();
  b->g.input[0] = value_info("X", WT_FLOAT, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 4}, NULL);
  return read_model(b);
}
static int c_init_rank_9(void) {
  model *b = base_model();
  b->g.initializer[1] = tensor("B", WT_FLOAT, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 3}, NULL);
  return read_model(b);
}
static int c_init_negative_dim(void) {
  model *b = base_model();
  b->g.initializer[1]->dims[0] = -3;
  return read_model(b);
}
static int c_init_dims_overflow(void) {
  model *b = base_model();
  Onnx__TensorProto *t = b->g.initializer[1];
  t->n_dims = 4;
  t->dims = A(sizeof(int64_t) * 4);
  for (int i = 0; i < 4; i++) t->dims[i] = (int64_t)1 << 40; /* product overflows 64 bits */
  return read_model(b);
}
static int c_init_zero_and_huge(void) {
  model *b = base_model();
  Onnx__TensorProto *t = b->g.initializer[1];
  t->n_dims = 3;
  t->dims = A(sizeof(int64_t) * 3);
  t->dims[0] = 0; /* no elements, but strides of the other axes would overflow */
  t->dims[1] = t->dims[2] = (int64_t)1 << 62;
  t->raw_data.len = 0;
  return read_model(b);
}
static int c_init_too_many_elems(void) {
  model *b = base_model();
  Onnx__TensorProto *t = b->g.initializer[1];
  t->n_dims = 2;
  t->dims = A(sizeof(int64_t) * 2);
  t->dims[0] = 65536;
  t->dims[1] = 65537; /* just over 2^32 elements, 16 bytes of data */
  return read_model(b);
}
static int c_init_raw_short(void) {
  model *b = base_model();
  b->g.initializer[0]->raw_data.len -= 4;
  return read_model(b);
}
static int c_init_raw_long(void) {
  model *b = base_model();
  b->g.initializer[1]->raw_data.data = A(64);
  b->g.initializer[1]->raw_data.len = 64;
  return read_model(b);
}
static int c_init_float_data_count(void) {
  model *b = base_model();
  Onnx__TensorProto *t = b->g.initializer[1];
  t->has_raw_data = 0;
  t->n_float_data = 2;
  t->float_data = A(sizeof(float) * 2);
  return read_model(b);
}
static int c_init_int64_data_count(void) {
  model *b = base_model();
  Onnx__TensorProto *t = tensor("K", WT_INT64, 1, (int64_t[]){4}, NULL);
  t->has_raw_data = 0;
  t->n_int64_data = 5;
  t->int64_data = A(sizeof(int64_t) * 5);
  PUSH(b->g.n_initializer, b->g.initializer, t);
  return read_model(b);
}
static int c_init_segment(void) {
  model *b = base_model();
  Onnx__TensorProto__Segment *s = A(sizeof *s);
  onnx__tensor_proto__segment__init(s);
  s->has_begin = s->has_end = 1;
  s->end = 1;
  b->g.initializer[1]->segment = s;
  return read_model(b);
}
static Onnx__StringStringEntryProto *kv(const char *k, const char *v) {
  Onnx__StringStringEntryProto *e = A(sizeof *e);
  onnx__string_string_entry_proto__init(e);
  e->key = S(k);
  e->value = S(v);
  return e;
}
static model *external(const char *location, const char *length) {
  model *b = base_model();
  Onnx__TensorProto *t = b->g.initializer[1];
  t->has_raw_data = 0;
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (location) PUSH(t->n_external_data, t->external_data, kv("location", location));
  if (length) PUSH(t->n_external_data, t->external_data, kv("length", length));
  return b;
}
static int c_external_absolute(void) { return read_model(external("/etc/passwd", NULL)); }
static int c_external_dotdot(void) { return read_model(external("weights/../../secret.bin", NULL)); }
static int c_external_backslash(void) { return read_model(external("..\\secret.bin", NULL)); }
static int c_external_no_location(void) { return read_model(external(NULL, "12")); }
static int c_external_bad_length(void) { return read_model(external("b.bin", "4096")); }
static int c_external_from_bytes(void) { return read_model(external("b.bin", "12")); }
static int c_external_colon(void) { return read_model(external("C:weights.bin", NULL)); }
/* '..' inside a file name is no parent directory: the location passes (and no reader is given) */
static int c_external_dots_in_name(void) { return read_model(external("b..bin", NULL)); }
static model *external_entry(const char *key, const char *value) {
  model *b = external("b.bin", NULL);
  Onnx__TensorProto *t = b->g.initializer[1];
  PUSH(t->n_external_data, t->external_data, kv(key, value));
  return b;
}
static int c_external_offset_text(void) { return read_model(external_entry("offset", "12abc")); }
static int c_external_offset_negative(void) { return read_model(external_entry("offset", "-4")); }
static int c_external_offset_huge(void) { return read_model(external_entry("offset", "99999999999999999999")); }
static int c_external_length_hex(void) { return read_model(external_entry("length", "0xc")); }
/* Listing what a model references (the JS layer reads it first) checks the same way. */
static int c_external_list_dotdot(void) {
  size_t len;
  uint8_t *bytes = pack(external("../b.bin", NULL), &len);
  wt_external_ref *refs = NULL;
  int n = 0;
  int rc = wt_onnx_list_external(bytes, len, &refs, &n);
  wt_external_refs_free(refs, n);
  return rc;
}
static int c_external_list_ok(void) {
  size_t len;
  uint8_t *bytes = pack(external_entry("offset", "40"), &len);
  wt_external_ref *refs = NULL;
  int n = 0;
  int rc = wt_onnx_list_external(bytes, len, &refs, &n);
  if (rc == WT_OK && (n != 1 || strcmp(refs[0].tensor, "B") || strcmp(refs[0].location, "b.bin") ||
                      refs[0].offset != 40 || refs[0].length != 12))
    rc = wt_errorf(WT_ERR_INTERNAL, "listed %d refs, not B in b.bin at 40 (12 bytes)", n);
  wt_external_refs_free(refs, n);
  return rc;
}
/* A model file next to no data file: the native reader looks beside the model. */
static int c_external_missing_file(void) {
  size_t len;
  uint8_t *bytes = pack(external("missing-weights.bin", NULL), &len);
  char path[] = "/tmp/wt_bad_input_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return wt_errorf(WT_ERR_IO, "mkstemp failed");
  int ok = write(fd, bytes, len) == (ssize_t)len;
  close(fd);
  wt_graph *g = NULL;
  int rc = ok ? wt_onnx_read_file(path, &g) : wt_errorf(WT_ERR_IO, "write failed");
  wt_graph_free(g);
  unlink(path);
  return rc;
}
/* External data shorter than the tensor needs. */
static int c_external_short_file(void) {
  char dir[] = "/tmp/wt_bad_input_dir_XXXXXX";
  if (!mkdtemp(dir)) return wt_errorf(WT_ERR_IO, "mkdtemp failed");
  char mpath[256], dpath[256];
  snprintf(mpath, sizeof mpath, "%s/model.onnx", dir);
  snprintf(dpath, sizeof dpath, "%s/b.bin", dir);
  size_t len;
  uint8_t *bytes = pack(external("b.bin", NULL), &len);
  FILE *f = fopen(mpath, "wb");
  fwrite(bytes, 1, len, f);
  fclose(f);
  f = fopen(dpath, "wb");
  fwrite("abcd", 1, 4, f);
  fclose(f);
  wt_graph *g = NULL;
  int rc = wt_onnx_read_file(mpath, &g);
  wt_graph_free(g);
  unlink(mpath);
  unlink(dpath);
  rmdir(dir);
  return rc;
}
static int c_attr_graph(void) {
  model *b = base_model();
  Onnx__AttributeProto *a = attr(b->g.node[0], "then_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  a->g = A(sizeof *a->g);
  onnx__graph_proto__init(a->g);
  return read_model(b);
}
static int c_attr_sparse(void) {
  model *b = base_model();
  attr(b->g.node[0], "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR);
  return read_model(b);
}
static int c_attr_tensors(void) {
  model *b = base_model();
  attr(b->g.node[0], "values", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS);
  return read_model(b);
}
static int c_attr_type_proto(void) {
  model *b = base_model();
  attr(b->g.node[0], "dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO);
  return read_model(b);
}
static int c_attr_no_type(void) {
  model *b = base_model();
  attr(b->g.node[0], "mystery", 0);
  return read_model(b);
}
static int c_attr_bad_type(void) {
  model *b = base_model();
  attr(b->g.node[0], "mystery", 99);
  return read_model(b);
}
static int c_attr_ref(void) {
  model *b = base_model();
  attr(b->g.node[0], "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)->ref_attr_name = S("outer");
  return read_model(b);
}
static int c_attr_tensor_missing(void) {
  model *b = base_model();
  attr(b->g.node[0], "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  return read_model(b);
}
static int c_attr_tensor_bad_raw(void) {
  model *b = base_model();
  Onnx__AttributeProto *a = attr(b->g.node[0], "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = tensor("", WT_FLOAT, 1, (int64_t[]){3}, NULL);
  a->t->raw_data.len = 5;
  return read_model(b);
}
static int c_sparse_initializer(void) {
  model *b = base_model();
  Onnx__SparseTensorProto *s = A(sizeof *s);
  onnx__sparse_tensor_proto__init(s);
  PUSH(b->g.n_sparse_initializer, b->g.sparse_initializer, s);
  return read_model(b);
}
static int c_map_input(void) {
  model *b = base_model();
  Onnx__TypeProto *tp = b->g.input[0]->type;
  Onnx__TypeProto__Map *m = A(sizeof *m);
  onnx__type_proto__map__init(m);
  m->has_key_type = 1;
  m->key_type = WT_INT64;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
  tp->map_type = m;
  return read_model(b);
}
static int c_unknown_op(void) {
  model *b = base_model();
  b->g.node[1]->op_type = S("Frobnicate");
  return run_model(b);
}
static int c_unknown_op_at_create(void) {
  model *b = base_model();
  b->g.node[0]->op_type = S("Frobnicate");
  b->g.node[1]->op_type = S("Frobnicate");
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_session *s = NULL;
  int rc = wt_session_create(bytes, len, &s); /* fails here, before any input is given */
  wt_session_free(s);
  return rc;
}
static int c_unknown_domain(void) {
  model *b = base_model();
  b->g.node[1]->domain = S("com.example");
  return run_model(b);
}
static int c_wrong_arity(void) {
  model *b = base_model();
  b->g.node[1]->n_input = 1; /* Add with one input */
  return run_model(b);
}
static int c_matmul_mismatch(void) {
  model *b = base_model();
  b->g.initializer[0] = tensor("W", WT_FLOAT, 2, (int64_t[]){5, 3}, NULL);
  return run_model(b);
}
static int c_tensor_pb_garbage(void) {
  static const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0x7f};
  wt_const_tensor *t = NULL;
  int rc = wt_tensor_pb_read(junk, sizeof junk, &t);
  wt_const_tensor_free(t);
  return rc;
}
static int c_tensor_pb_dtype(void) {
  Onnx__TensorProto *tp = tensor("t", WT_FLOAT, 1, (int64_t[]){2}, NULL);
  tp->data_type = 16; /* BFLOAT16 */
  size_t len = onnx__tensor_proto__get_packed_size(tp);
  uint8_t *b = A(len);
  onnx__tensor_proto__pack(tp, b);
  wt_const_tensor *t = NULL;
  int rc = wt_tensor_pb_read(b, len, &t);
  wt_const_tensor_free(t);
  return rc;
}

/* -- inputs at run time -- */
static int c_input_wrong_shape(void) { return run_model_x(base_model(), WT_FLOAT, 2, (int64_t[]){8, 5}, 0); }
static int c_input_wrong_rank(void) { return run_model_x(base_model(), WT_FLOAT, 3, (int64_t[]){2, 4, 1}, 0); }
static int c_input_wrong_dtype(void) { return run_model_x(base_model(), WT_INT32, 2, (int64_t[]){2, 4}, 0); }
static int c_input_bad_dtype_code(void) { return run_model_x(base_model(), 11, 2, (int64_t[]){2, 4}, 0); }
static int c_input_rank_too_big(void) {
  return run_model_x(base_model(), WT_FLOAT, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 2, 4}, 0);
}
static int c_input_negative_dim(void) { return run_model_x(base_model(), WT_FLOAT, 2, (int64_t[]){-2, 4}, 0); }
static int c_input_over_2_40(void) {
  return run_model_x(base_model(), WT_FLOAT, 2, (int64_t[]){(int64_t)1 << 62, 4}, 0);
}
static int c_input_zero_and_huge(void) {
  model *b = base_model();
  b->g.input[0] = value_info("X", WT_FLOAT, 3, NULL, (const char *[]){"a", "b", "c"});
  return run_model_x(b, WT_FLOAT, 3, (int64_t[]){0, (int64_t)1 << 62, (int64_t)1 << 62}, 0);
}
static int c_input_nan(void) {
  /* NaN flows through inference; the call succeeds and the output says NaN */
  return run_model_x(base_model(), WT_FLOAT, 2, (int64_t[]){2, 4}, NAN);
}
static int c_input_index_range(void) {
  size_t len;
  uint8_t *bytes = pack(base_model(), &len);
  wt_session *s = NULL;
  WT_TRY(wt_session_create(bytes, len, &s));
  float x[8] = {0};
  int rc = wt_session_set_input(s, 3, WT_FLOAT, 2, (int64_t[]){2, 4}, x);
  wt_session_free(s);
  return rc;
}
static int c_input_null_data(void) {
  size_t len;
  uint8_t *bytes = pack(base_model(), &len);
  wt_session *s = NULL;
  WT_TRY(wt_session_create(bytes, len, &s));
  int rc = wt_session_set_input(s, 0, WT_FLOAT, 2, (int64_t[]){2, 4}, NULL);
  wt_session_free(s);
  return rc;
}
static int c_input_not_set(void) {
  size_t len;
  uint8_t *bytes = pack(base_model(), &len);
  wt_session *s = NULL;
  WT_TRY(wt_session_create(bytes, len, &s));
  int rc = wt_session_run(s);
  wt_session_free(s);
  return rc;
}
static int c_output_before_run(void) {
  size_t len;
  uint8_t *bytes = pack(base_model(), &len);
  wt_session *s = NULL;
  WT_TRY(wt_session_create(bytes, len, &s));
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  int rc = wt_session_output(s, 0, &dt, &rank, &dims, &data);
  wt_session_free(s);
  return rc;
}
static int c_huge_batch(void) {
  /* a batch whose activations cannot be allocated (1.5 TB here): a clear error that says how
   * much was needed, and the session stays usable. Planned directly (no run reads X), so the
   * case is safe even where the allocation could succeed (vm.overcommit_memory=1). */
  size_t len;
  uint8_t *bytes = pack(base_model(), &len);
  wt_graph *g = NULL;
  WT_TRY(wt_onnx_read(bytes, len, NULL, &g));
  float x[8] = {0};
  wt_tensor in = {.dtype = WT_FLOAT, .rank = 2, .dims = {(int64_t)1 << 37, 4}, .data = x};
  wt_plan *p = NULL;
  int rc = wt_plan_build(g, &in, &p);
  wt_plan_free(p);
  wt_graph_free(g);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", wt_last_error());
  WT_TRY(run_model(base_model()));
  return rc ? wt_errorf(rc, "%s", msg) : WT_OK;
}

/* -- generate_artifacts options -- */
static int c_rg_unknown(void) { return gen_with((const char *[]){"W", "nope"}, 2, NULL, 0); }
static int c_rg_typo(void) { return gen_with((const char *[]){"w"}, 1, NULL, 0); }
/* The base model as exported in eval mode with constant folding: its weights are Constant nodes. */
static int c_no_float_initializers(void) {
  model *b = base_model();
  b->g.n_initializer = 0;
  Onnx__NodeProto *w = node("Constant", "w", 0, NULL, 1, (const char *[]){"W"});
  attr(w, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = tensor("", WT_FLOAT, 2, (int64_t[]){4, 3}, W_DATA);
  Onnx__NodeProto *bias = node("Constant", "b", 0, NULL, 1, (const char *[]){"B"});
  attr(bias, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = tensor("", WT_FLOAT, 1, (int64_t[]){3}, B_DATA);
  Onnx__NodeProto **nodes = A(sizeof *nodes * 4);
  nodes[0] = w, nodes[1] = bias, nodes[2] = b->g.node[0], nodes[3] = b->g.node[1];
  b->g.node = nodes;
  b->g.n_node = 4;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(b, &o);
}
/* ... or whose folded weights became initializers with names PyTorch made up. */
static model *anonymous_weights(void) {
  model *b = base_model();
  b->g.initializer[0]->name = S("onnx::MatMul_7");
  b->g.initializer[1]->name = S("onnx::Add_8");
  b->g.node[0]->input[1] = S("onnx::MatMul_7");
  b->g.node[1]->input[1] = S("onnx::Add_8");
  return b;
}
static int c_anonymous_initializers(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_anonymous_initializers_named(void) {
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"fc.weight"}, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_anonymous_initializers_listed(void) {
  /* naming them in requires_grad is a deliberate choice: it trains */
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"onnx::MatMul_7", "onnx::Add_8"}, .n_requires_grad = 2,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_frozen_unknown(void) { return gen_with(NULL, 0, (const char *[]){"ghost"}, 1); }
static int c_rg_frozen_overlap(void) { return gen_with((const char *[]){"W", "B"}, 2, (const char *[]){"B"}, 1); }
static int c_rg_input_not_param(void) { return gen_with((const char *[]){"X"}, 1, NULL, 0); }
static int c_rg_int_param(void) {
  model *b = base_model();
  PUSH(b->g.n_initializer, b->g.initializer, tensor("K", WT_INT64, 1, (int64_t[]){1}, (int64_t[]){1}));
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"K"}, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(b, &o);
}
static int c_rg_duplicate(void) { return gen_with((const char *[]){"W", "W"}, 2, NULL, 0); }
static int c_ort_format(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .ort_format = 1};
  return gen(base_model(), &o);
}
static int c_custom_op_library(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .custom_op_library = "libcustom.so"};
  return gen(base_model(), &o);
}
static int c_additional_output_unknown(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .additional_output_names = (const char *[]){"nope"},
                         .n_additional_outputs = 1};
  return gen(base_model(), &o);
}
static int c_loss_input_unknown(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .loss_input_names = (const char *[]){"nope"},
                         .n_loss_inputs = 1};
  return gen(base_model(), &o);
}
static int c_loss_two_inputs(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .loss_input_names = (const char *[]){"Y", "H"},
                         .n_loss_inputs = 2};
  return gen(base_model(), &o);
}
static int c_loss_bad_reduction(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE, .reduction = "median"}};
  return gen(base_model(), &o);
}
static int c_loss_int_output(void) {
  model *b = base_model();
  PUSH(b->g.n_node, b->g.node, node("Cast", "cast", 1, (const char *[]){"Y"}, 1, (const char *[]){"Yi"}));
  Onnx__AttributeProto *to = attr(b->g.node[2], "to", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  to->has_i = 1;
  to->i = WT_INT64;
  b->g.output[0] = value_info("Yi", WT_INT64, -1, NULL, NULL);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}
static int c_loss_name_taken(void) {
  /* the MSE target input is called "target": a model value of that name collides */
  model *b = base_model();
  b->g.node[1]->output[0] = S("target");
  b->g.output[0] = value_info("target", WT_FLOAT, 2, (int64_t[]){0, 3}, (const char *[]){"batch", NULL});
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}
/* The hidden value H renamed to a name the training model must give to something of its own. */
static int gen_hidden_named(const char *name) {
  model *b = base_model();
  b->g.node[0]->output[0] = S(name);
  b->g.node[1]->input[0] = S(name);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(b, &o);
}
static int c_name_taken_buffer(void) { return gen_hidden_named("W_grad.accumulation.buffer"); }
static int c_name_taken_acc_out(void) { return gen_hidden_named("B_grad.accumulation.out"); }
static int c_name_taken_reset(void) { return gen_hidden_named("lazy_reset_grad"); }
static int c_name_taken_grad(void) { return gen_hidden_named("W_grad"); }
static int c_param_unused(void) {
  model *b = base_model();
  PUSH(b->g.n_initializer, b->g.initializer, tensor("U", WT_FLOAT, 1, (int64_t[]){3}, B_DATA));
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"W", "U"}, .n_requires_grad = 2,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(b, &o);
}
static int c_artifacts_garbage(void) {
  static const uint8_t junk[] = {0x08, 0x80};
  wt_artifacts a;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return wt_generate_artifacts(junk, sizeof junk, &o, &a);
}
static int c_artifacts_no_outputs(void) {
  model *b = base_model();
  b->g.n_output = 0;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}

/* -- checkpoints -- */
static int c_ckpt_empty(void) { return load_ckpt((const uint8_t *)"", 0); }
static int c_ckpt_truncated_header(void) { return load_ckpt(g_art.checkpoint.data, 6); }
static int c_ckpt_truncated_half(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len / 2); }
static int c_ckpt_truncated_last(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len - 1); }
static int c_ckpt_truncated_3_4(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len * 3 / 4); }
static int c_ckpt_identifier(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  memcpy(c + 4, "ORTM", 4);
  return load_ckpt(c, len);
}
static int c_ckpt_onnx_bytes(void) { return load_ckpt(g_art.eval_model.data, g_art.eval_model.len); }
static int c_ckpt_root_offset(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  wr32(c, 0x7ffffff0u);
  return load_ckpt(c, len);
}
static int c_ckpt_root_unaligned(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  wr32(c, (uint32_t)len - 2);
  return load_ckpt(c, len);
}
static int c_ckpt_vtable_offset(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  uint32_t root = rd32(c);
  wr32(c + root, 0x80000000u); /* vtable far outside the buffer */
  return load_ckpt(c, len);
}
static int c_ckpt_version(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  uint32_t at = fb_field(c, rd32(c), 0);
  if (!at) return wt_errorf(WT_ERR_INTERNAL, "no version field");
  wr32(c + at, 7);
  return load_ckpt(c, len);
}
static int c_ckpt_module_state_offset(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  uint32_t at = fb_field(c, rd32(c), 1);
  if (!at) return wt_errorf(WT_ERR_INTERNAL, "no module_state field");
  wr32(c + at, 0xfffffff0u);
  return load_ckpt(c, len);
}
/* Every single-bit flip in the first 512 bytes (the tables, vtables, names and shapes): each
 * either loads or fails with a message; whatever loads also saves. */
static int c_ckpt_bitflips(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  size_t n = len < 512 ? len : 512;
  int failures = 0;
  for (size_t i = 0; i < n; i++)
    for (int bit = 0; bit < 8; bit++) {
      c[i] ^= (uint8_t)(1u << bit);
      wt_state *s = NULL;
      int rc = wt_state_load(c, len, &s);
      if (rc && !wt_last_error()[0]) failures++;
      if (!rc) {
        uint8_t *out;
        size_t out_len;
        if (wt_state_save(s, 1, &out, &out_len) == WT_OK) wt_free(out);
      }
      wt_state_free(s);
      c[i] ^= (uint8_t)(1u << bit);
    }
  return failures ? wt_errorf(WT_ERR_INTERNAL, "%d flips failed without a message", failures) : WT_OK;
}
static int c_ckpt_write_rank_9(void) {
  wt_const_tensor t = {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 9, .dims = {1}}};
  wt_checkpoint c = {.version = 2, .n_trainable = 1, .trainable = &t};
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_checkpoint_write(&c, 0, &out, &len);
  free(out);
  return rc;
}
static int c_ckpt_write_negative_dim(void) {
  float d[1] = {0};
  wt_const_tensor t = {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {-1}, .data = d}};
  wt_checkpoint c = {.version = 2, .n_trainable = 1, .trainable = &t};
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_checkpoint_write(&c, 0, &out, &len);
  free(out);
  return rc;
}
static int c_ckpt_write_no_name(void) {
  float d[1] = {0};
  wt_const_tensor t = {.name = NULL, .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}};
  wt_checkpoint c = {.version = 2, .n_trainable = 1, .trainable = &t};
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_checkpoint_write(&c, 0, &out, &len);
  free(out);
  return rc;
}
static int c_ckpt_duplicate_param(void) {
  float d[1] = {0};
  wt_const_tensor t[2] = {{.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}},
                          {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}}};
  wt_checkpoint c = {.version = 2, .n_trainable = 2, .trainable = t};
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_checkpoint_write(&c, 0, &out, &len);
  if (!rc) rc = load_ckpt(out, len);
  free(out);
  return rc;
}
static int c_ckpt_nominal_train(void) {
  /* a nominal checkpoint has no parameter values: loading it as a training state is refused */
  model *b = base_model();
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts a;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD},
                         .nominal_checkpoint = 1};
  WT_TRY(wt_generate_artifacts(bytes, len, &o, &a));
  wt_state *s = NULL;
  int rc = wt_state_load(a.nominal_checkpoint.data, a.nominal_checkpoint.len, &s);
  wt_state_free(s);
  wt_artifacts_free(&a);
  return rc;
}

/* -- the training runtime -- */
static int other_artifacts(int64_t hidden, wt_artifacts *a) {
  model *b = base_model();
  b->g.initializer[0] = tensor("W", WT_FLOAT, 2, (int64_t[]){4, hidden}, NULL);
  b->g.initializer[1] = tensor("B", WT_FLOAT, 1, (int64_t[]){hidden}, NULL);
  b->g.output[0] = value_info("Y", WT_FLOAT, 2, (int64_t[]){0, hidden}, (const char *[]){"batch", NULL});
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return wt_generate_artifacts(bytes, len, &o, a);
}
static int c_ckpt_model_shape_mismatch(void) {
  /* the checkpoint of a 4x5 model with the training model of the 4x3 one (refused at create;
   * a train step would also refuse it) */
  wt_artifacts other;
  WT_TRY(other_artifacts(5, &other));
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(other.checkpoint.data, other.checkpoint.len, &s);
  if (!rc) rc = wt_module_create(s, g_art.training_model.data, g_art.training_model.len,
                                 g_art.eval_model.data, g_art.eval_model.len, &m);
  if (!rc) {
    train_run r = {s, m, NULL};
    rc = train_step(&r, 2, 4, 0.5f, WT_FLOAT);
  }
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&other);
  return rc;
}
/* Writes checkpoint c, loads it and creates a module on the test model's training graph (and
 * with `step`, runs one train step): the status of the first call that fails. */
static int module_from_checkpoint(const wt_checkpoint *c, int step) {
  uint8_t *bytes = NULL;
  size_t len;
  WT_TRY(wt_checkpoint_write(c, 0, &bytes, &len));
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(bytes, len, &s);
  if (!rc) rc = wt_module_create(s, g_art.training_model.data, g_art.training_model.len, NULL, 0, &m);
  if (!rc && step) {
    train_run r = {s, m, NULL};
    rc = train_step(&r, 2, 4, 0.5f, WT_FLOAT);
  }
  wt_module_free(m);
  wt_state_free(s);
  free(bytes);
  return rc;
}
static int c_ckpt_missing_param(void) {
  /* a checkpoint without 'B': the training model's input 'B' is then unbound */
  float w[12] = {0};
  wt_const_tensor t = {.name = "W", .t = {.dtype = WT_FLOAT, .rank = 2, .dims = {4, 3}, .data = w}};
  wt_checkpoint c = {.version = 2, .n_trainable = 1, .trainable = &t};
  return module_from_checkpoint(&c, 1);
}
static int c_ckpt_param_dtype(void) {
  /* 'W' stored as int64 in the checkpoint */
  int64_t w[12] = {0};
  float bb[3] = {0};
  wt_const_tensor t[2] = {{.name = "W", .t = {.dtype = WT_INT64, .rank = 2, .dims = {4, 3}, .data = w}},
                          {.name = "B", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {3}, .data = bb}}};
  wt_checkpoint c = {.version = 2, .n_frozen = 1, .frozen = t, .n_trainable = 1, .trainable = t + 1};
  return module_from_checkpoint(&c, 0);
}
static int c_ckpt_frozen_but_trained(void) {
  /* 'W' frozen in the checkpoint, but the training model accumulates its gradient */
  float w[12] = {0}, bb[3] = {0};
  wt_const_tensor t[2] = {{.name = "W", .t = {.dtype = WT_FLOAT, .rank = 2, .dims = {4, 3}, .data = w}},
                          {.name = "B", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {3}, .data = bb}}};
  wt_checkpoint c = {.version = 2, .n_frozen = 1, .frozen = t, .n_trainable = 1, .trainable = t + 1};
  return module_from_checkpoint(&c, 0);
}
static int c_module_bad_training_bytes(void) {
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(g_art.checkpoint.data, g_art.checkpoint.len, &s);
  if (!rc) rc = wt_module_create(s, g_art.checkpoint.data, g_art.checkpoint.len, NULL, 0, &m);
  wt_module_free(m);
  wt_state_free(s);
  return rc;
}
static int c_optimizer_model_is_eval(void) {
  wt_state *s = NULL;
  wt_optimizer *o = NULL;
  int rc = wt_state_load(g_art.checkpoint.data, g_art.checkpoint.len, &s);
  if (!rc) rc = wt_optimizer_create(s, g_art.eval_model.data, g_art.eval_model.len, &o);
  wt_optimizer_free(o);
  wt_state_free(s);
  return rc;
}
static int with_run(int (*fn)(train_run *)) {
  train_run r;
  int rc = open_run(&r, &g_art);
  if (!rc) rc = fn(&r);
  close_run(&r);
  return rc;
}
static int r_wrong_shape(train_run *r) { return train_step(r, 2, 5, 0.5f, WT_FLOAT); }
static int c_train_wrong_shape(void) { return with_run(r_wrong_shape); }
static int r_wrong_dtype(train_run *r) { return train_step(r, 2, 4, 0.5f, WT_INT64); }
static int c_train_wrong_dtype(void) { return with_run(r_wrong_dtype); }
static int r_batch_mismatch(train_run *r) {
  float x[3 * 4] = {0}, t[2 * 3] = {0};
  WT_TRY(wt_module_set_input(r->m, 0, 0, WT_FLOAT, 2, (int64_t[]){3, 4}, x));
  WT_TRY(wt_module_set_input(r->m, 0, 1, WT_FLOAT, 2, (int64_t[]){2, 3}, t));
  return wt_module_train_step(r->m);
}
static int c_train_batch_mismatch(void) { return with_run(r_batch_mismatch); }
static int r_input_index(train_run *r) {
  float x[8] = {0};
  return wt_module_set_input(r->m, 0, 7, WT_FLOAT, 2, (int64_t[]){2, 4}, x);
}
static int c_train_input_index(void) { return with_run(r_input_index); }
static int r_nan_loss(train_run *r) {
  /* NaN inputs: the step reports the NaN loss, the optimizer does not apply its gradients (the
   * parameters stay as they were), and the next good batch trains */
  float before[15], after[15];
  if (wt_state_params_size(r->s, 0) != 15) return wt_errorf(WT_ERR_INTERNAL, "expected 15 parameters");
  WT_TRY(wt_state_params_copy_to(r->s, 0, before, 15));
  int rc = train_step(r, 2, 4, NAN, WT_FLOAT);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", wt_last_error());
  (void)wt_optimizer_step(r->o);
  WT_TRY(wt_state_params_copy_to(r->s, 0, after, 15));
  if (memcmp(before, after, sizeof before) != 0)
    return wt_errorf(WT_ERR_INTERNAL, "a NaN step changed the parameters");
  WT_TRY(wt_module_lazy_reset_grad(r->m));
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  WT_TRY(wt_optimizer_step(r->o));
  return rc ? wt_errorf(rc, "%s", msg) : WT_OK;
}
static int c_train_nan_input(void) { return with_run(r_nan_loss); }
static int r_output_before_step(train_run *r) {
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  return wt_module_output(r->m, 0, 0, &dt, &rank, &dims, &data);
}
static int c_train_output_before_step(void) { return with_run(r_output_before_step); }
static int r_bad_lr(train_run *r) { return wt_optimizer_set_lr(r->o, NAN); }
static int c_optimizer_nan_lr(void) { return with_run(r_bad_lr); }
static int r_param_update_count(train_run *r) {
  float v[5] = {0};
  return wt_state_param_update(r->s, wt_state_param_index(r->s, "W"), v, 5);
}
static int c_param_update_count(void) { return with_run(r_param_update_count); }
static int r_param_update_index(train_run *r) {
  float v[5] = {0};
  return wt_state_param_update(r->s, 99, v, 5);
}
static int c_param_update_index(void) { return with_run(r_param_update_index); }
static int r_params_copy_count(train_run *r) {
  float v[4];
  return wt_state_params_copy_to(r->s, 0, v, 4);
}
static int c_params_copy_count(void) { return with_run(r_params_copy_count); }
static int r_property_no_name(train_run *r) { return wt_state_set_int_property(r->s, "", 1); }
static int c_property_no_name(void) { return with_run(r_property_no_name); }
static int r_export_unknown(train_run *r) {
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_module_export_for_inference(r->m, (const char *[]){"nope"}, 1, &out, &len);
  wt_free(out);
  return rc;
}
static int c_export_unknown_output(void) { return with_run(r_export_unknown); }
static int r_export_none(train_run *r) {
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_module_export_for_inference(r->m, NULL, 0, &out, &len);
  wt_free(out);
  return rc;
}
static int c_export_no_outputs(void) { return with_run(r_export_none); }
static int r_recover(train_run *r) {
  /* a failed step (wrong shape) leaves the module usable */
  if (train_step(r, 2, 5, 0.5f, WT_FLOAT) == WT_OK) return wt_errorf(WT_ERR_INTERNAL, "bad step passed");
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  return wt_optimizer_step(r->o);
}
static int c_train_recovers(void) { return with_run(r_recover); }

/* -- the fuzzers' regression inputs (tests/bad_input/files) -- */
static int c_fuzz_reduce_no_scratch(void) { return run_file(FILES "reduce_logsum_no_scratch.onnx", 1.0f); }
static int c_fuzz_resize_inf_scale(void) { return run_file(FILES "resize_inf_scale.onnx", INFINITY); }
static int c_fuzz_conv_transpose_empty(void) { return run_file(FILES "conv_transpose_empty.onnx", 1.0f); }
static int c_fuzz_gru_empty_omitted_y(void) { return run_file(FILES "gru_empty_sequence_omitted_y.onnx", 1.0f); }
static int c_fuzz_empty_graph(void) { return run_file(FILES "empty_graph.onnx", 0.0f); }
static int c_fuzz_empty_tensor_pb(void) {
  uint8_t *b;
  size_t len;
  WT_TRY(wt_read_file(FILES "empty_tensor.pb", &b, &len));
  wt_const_tensor *t = NULL;
  int rc = wt_tensor_pb_read(b, len, &t);
  if (!rc) {
    uint8_t *o = NULL;
    size_t olen;
    rc = wt_tensor_pb_write(t, &o, &olen);
    free(o);
  }
  wt_const_tensor_free(t);
  free(b);
  return rc;
}

static int load_state_file(const char *path) {
  uint8_t *b;
  size_t len;
  WT_TRY(wt_read_file(path, &b, &len));
  wt_state *st = NULL;
  int rc = wt_state_load(b, len, &st);
  wt_state_free(st);
  free(b);
  return rc;
}
static int c_fuzz_ckpt_duplicate_momentum(void) { return load_state_file(FILES "ckpt_duplicate_momentum.odtc"); }
static int c_fuzz_ckpt_zero_and_huge_dims(void) { return load_state_file(FILES "ckpt_zero_and_huge_dims.odtc"); }
static int c_fuzz_loss_on_bn_stat(void) {
  uint8_t *b;
  size_t len;
  WT_TRY(wt_read_file(FILES "artifacts_loss_on_bn_stat.onnx", &b, &len));
  wt_graph *g;
  int rc = wt_onnx_read(b, len, NULL, &g);
  free(b);
  if (rc) return rc;
  /* The ONNX node test feeds every tensor as an input: a model with no float initializer at all
   * is refused up front (artifacts/no-float-initializers), so its bias becomes one to train. */
  int v = wt_graph_find(g, "bias"), kept = 0;
  if (v < 0) rc = wt_errorf(WT_ERR_INVALID_ARG, "test model: no 'bias'");
  for (int k = 0; rc == WT_OK && k < g->n_inputs; k++)
    if (g->inputs[k] != v) g->inputs[kept++] = g->inputs[k];
  if (rc == WT_OK) {
    g->n_inputs = kept;
    wt_value *bias = &g->values[v];
    bias->flags = (bias->flags & ~(uint32_t)WT_VALUE_GRAPH_INPUT) | WT_VALUE_INITIALIZER;
    bias->nbytes = sizeof(float) * (size_t)bias->dims[0];
    bias->data = calloc(1, bias->nbytes);
    if (!bias->data) abort();
  }
  if (rc) {
    wt_graph_free(g);
    return rc;
  }
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_L1}};
  wt_artifacts a;
  rc = wt_generate_artifacts_graph(g, &o, &a);
  if (rc == WT_OK) wt_artifacts_free(&a);
  return rc;
}

/* ==== the table ============================================================================ */

typedef struct bad_case {
  const char *name;
  int (*fn)(void);
  int code;               /* expected status; WT_OK: must succeed */
  const char *expect;     /* substring of wt_last_error() */
} bad_case;

static const bad_case CASES[] = {
  /* ONNX model bytes */
  {"model/empty", c_empty_model, WT_ERR_PARSE, "ONNX model has no graph"},
  {"model/garbage", c_garbage_model, WT_ERR_PARSE, "not a valid ONNX model (8 bytes): ModelProto: field 7 at byte 0 has a length beyond the end"},
  {"model/truncated", c_truncated_model, WT_ERR_PARSE, "not a valid ONNX model (205 bytes): ModelProto: field 7 at byte 13 has a length beyond the end"},
  {"model/truncated-golden", c_truncated_golden, WT_ERR_PARSE, "not a valid ONNX model (3746 bytes): ModelProto: field 7 at byte 19 has a length beyond the end"},
  {"model/bit-flips", c_bitflips_model, WT_OK, ""},
  {"model/no-graph", c_no_graph, WT_ERR_PARSE, "ONNX model has no graph"},
  {"model/local-functions", c_local_functions, WT_ERR_UNSUPPORTED, "ONNX model defines 1 local functions (not supported)"},
  {"model/node-no-op-type", c_node_no_op_type, WT_ERR_PARSE, "node 'mm' has no op_type"},
  {"model/node-65-inputs", c_node_65_inputs, WT_ERR_UNSUPPORTED, "Sum node 'sum' has 65 inputs and 1 outputs; at most 64 each are supported"},
  {"model/duplicate-node-output", c_duplicate_node_output, WT_ERR_PARSE, "Relu node 'again': output 'H' is already defined elsewhere (ONNX graphs are single-assignment)"},
  {"model/node-output-is-input", c_node_output_is_input, WT_ERR_PARSE, "Relu node 'clobber': output 'X' is already defined elsewhere"},
  {"model/node-output-is-initializer", c_node_output_is_initializer, WT_ERR_PARSE, "Relu node 'clobber': output 'W' is already defined elsewhere"},
  {"model/duplicate-initializer", c_duplicate_initializer, WT_ERR_PARSE, "initializer 'W' is defined twice"},
  {"model/initializer-no-name", c_initializer_no_name, WT_ERR_PARSE, "initializer #1 has no name"},
  {"model/duplicate-input", c_duplicate_input, WT_ERR_PARSE, "graph input 'X' is listed twice"},
  {"model/input-no-name", c_input_no_name, WT_ERR_PARSE, "graph input #0 has no name"},
  {"model/output-no-name", c_output_no_name, WT_ERR_PARSE, "graph output #0 has no name"},
  {"model/output-not-produced", c_output_not_produced, WT_ERR_PARSE, "graph output 'ghost' is not produced by any node, input or initializer"},
  {"model/cycle", c_cycle, WT_ERR_PARSE, "MatMul node 'mm': input 'Z' is part of a cycle"},
  {"model/self-loop", c_self_loop, WT_ERR_PARSE, "Add node 'add': input 'Y' is part of a cycle"},
  {"model/undefined-input", c_undefined_input, WT_ERR_PARSE, "Add node 'add': input 'nowhere' is not a graph input, an initializer or the output of any node"},
  {"model/initializer-double", c_init_dtype_double, WT_ERR_UNSUPPORTED, "initializer 'B' has dtype double; webtrain supports float, int32, int64, bool and float16 (weights)"},
  {"model/initializer-string", c_init_dtype_string, WT_ERR_UNSUPPORTED, "initializer 'B' has dtype string"},
  {"model/input-double", c_input_dtype_double, WT_ERR_UNSUPPORTED, "graph input 'X' has dtype double; webtrain supports float, int32, int64, bool and float16 (weights)"},
  {"model/input-float16-to-matmul", c_input_float16_matmul, WT_ERR_SHAPE, "input 0 'X' is float16, which MatMul does not read"},
  {"model/initializer-float16-to-add", c_init_float16_add, WT_ERR_SHAPE, "input 1 'B' is float16, which Add does not read"},
  {"model/float16-raw-data-short", c_init_float16_raw_short, WT_ERR_PARSE, "initializer 'W' has 20 bytes of raw_data; float16 [4,3] needs 24"},
  {"model/float16-int32-data-count", c_init_float16_int32_count, WT_ERR_PARSE, "tensor 'W' has 11 values in its int32_data field; its dims say 12"},
  {"model/float16-int32-data-range", c_init_float16_int32_range, WT_ERR_PARSE, "tensor 'W' is float16 and element 5 of its int32_data is 70000"},
  {"model/input-rank-9", c_input_rank_9, WT_ERR_UNSUPPORTED, "graph input 'X' has rank 9; webtrain supports rank <= 8"},
  {"model/initializer-rank-9", c_init_rank_9, WT_ERR_UNSUPPORTED, "initializer 'B' has rank 9; webtrain supports rank <= 8"},
  {"model/initializer-negative-dim", c_init_negative_dim, WT_ERR_PARSE, "initializer 'B' has negative dimension -3 at axis 0"},
  {"model/initializer-dims-overflow", c_init_dims_overflow, WT_ERR_PARSE, "initializer 'B' is too large (more than 2^32 elements)"},
  {"model/initializer-zero-and-huge", c_init_zero_and_huge, WT_ERR_PARSE, "initializer 'B' is too large (more than 2^32 elements)"},
  {"model/initializer-over-2^32", c_init_too_many_elems, WT_ERR_PARSE, "initializer 'B' is too large (more than 2^32 elements)"},
  {"model/raw-data-short", c_init_raw_short, WT_ERR_PARSE, "initializer 'W' has 44 bytes of raw_data; float [4,3] needs 48"},
  {"model/raw-data-long", c_init_raw_long, WT_ERR_PARSE, "initializer 'B' has 64 bytes of raw_data; float [3] needs 12"},
  {"model/float-data-count", c_init_float_data_count, WT_ERR_PARSE, "tensor 'B' has 2 values in its float_data field; its dims say 3"},
  {"model/int64-data-count", c_init_int64_data_count, WT_ERR_PARSE, "tensor 'K' has 5 values in its int64_data field; its dims say 4"},
  {"model/segmented-tensor", c_init_segment, WT_ERR_UNSUPPORTED, "initializer 'B' is segmented; segments are not supported"},
  {"model/external-absolute-path", c_external_absolute, WT_ERR_PARSE, "external data location '/etc/passwd' must be a relative path inside the model's directory"},
  {"model/external-dotdot", c_external_dotdot, WT_ERR_PARSE, "external data location 'weights/../../secret.bin' must be a relative path"},
  {"model/external-backslash", c_external_backslash, WT_ERR_PARSE, "must be a relative path inside the model's directory"},
  {"model/external-no-location", c_external_no_location, WT_ERR_PARSE, "tensor 'B' has external data without a location"},
  {"model/external-length", c_external_bad_length, WT_ERR_PARSE, "tensor 'B': external data length 4096; its dims and dtype need 12 bytes"},
  {"model/external-from-bytes", c_external_from_bytes, WT_ERR_IO, "tensor 'B' is stored in external file 'b.bin', but no way to read external data was given"},
  {"model/external-colon", c_external_colon, WT_ERR_PARSE, "external data location 'C:weights.bin' must be a relative path inside the model's directory (no absolute path, '..', '\\' or ':')"},
  {"model/external-dots-in-name", c_external_dots_in_name, WT_ERR_IO, "tensor 'B' is stored in external file 'b..bin', but no way"},
  {"model/external-offset-text", c_external_offset_text, WT_ERR_PARSE, "tensor 'B': external data offset '12abc' is not a whole number of bytes"},
  {"model/external-offset-negative", c_external_offset_negative, WT_ERR_PARSE, "external data offset '-4' is not a whole number"},
  {"model/external-offset-huge", c_external_offset_huge, WT_ERR_PARSE, "external data offset '99999999999999999999' is not a whole number"},
  {"model/external-length-hex", c_external_length_hex, WT_ERR_PARSE, "tensor 'B': external data length '0xc' is not a whole number of bytes"},
  {"model/external-list-dotdot", c_external_list_dotdot, WT_ERR_PARSE, "tensor 'B': external data location '../b.bin' must be a relative path"},
  {"model/external-list-ok", c_external_list_ok, WT_OK, ""},
  {"model/external-missing-file", c_external_missing_file, WT_ERR_IO, "cannot open external data file '/tmp/missing-weights.bin'"},
  {"model/external-short-file", c_external_short_file, WT_ERR_IO, "has no 12 bytes at offset 0"},
  {"model/attr-graph", c_attr_graph, WT_ERR_UNSUPPORTED, "MatMul node 'mm': attribute 'then_branch' holds a nested graph"},
  {"model/attr-sparse", c_attr_sparse, WT_ERR_UNSUPPORTED, "attribute 'value' is a sparse tensor (not supported)"},
  {"model/attr-tensors", c_attr_tensors, WT_ERR_UNSUPPORTED, "attribute 'values' is a list of tensors (not supported)"},
  {"model/attr-type-proto", c_attr_type_proto, WT_ERR_UNSUPPORTED, "attribute 'dtype' is a type (not supported)"},
  {"model/attr-no-type", c_attr_no_type, WT_ERR_PARSE, "attribute 'mystery' has no valid type (0)"},
  {"model/attr-type-99", c_attr_bad_type, WT_ERR_PARSE, "attribute 'mystery' has no valid type (99)"},
  {"model/attr-ref", c_attr_ref, WT_ERR_UNSUPPORTED, "attribute 'alpha' refers to a function attribute"},
  {"model/attr-tensor-missing", c_attr_tensor_missing, WT_ERR_PARSE, "tensor attribute 'value' has no tensor"},
  {"model/attr-tensor-raw", c_attr_tensor_bad_raw, WT_ERR_PARSE, "attribute 'value': tensor attribute '' has 5 bytes of raw_data; float [3] needs 12"},
  {"model/sparse-initializer", c_sparse_initializer, WT_ERR_UNSUPPORTED, "graph has 1 sparse initializers (not supported)"},
  {"model/map-input", c_map_input, WT_ERR_UNSUPPORTED, "graph input 'X' is not a tensor or a sequence of tensors"},
  {"model/unknown-op", c_unknown_op, WT_ERR_UNSUPPORTED, "webtrain does not support 1 op of this model: Frobnicate (ai.onnx, opset 17; node 'add')"},
  {"model/unknown-op-at-create", c_unknown_op_at_create, WT_ERR_UNSUPPORTED, "webtrain does not support 1 op of this model: Frobnicate (ai.onnx, opset 17; node 'mm', 'add')"},
  {"model/unknown-domain", c_unknown_domain, WT_ERR_UNSUPPORTED, "webtrain does not support 1 op of this model: Add (com.example, opset 0; node 'add')"},
  {"model/wrong-arity", c_wrong_arity, WT_ERR_INVALID_ARG, "has 1 inputs and 1 outputs; expected 2..2 inputs"},
  {"model/matmul-mismatch", c_matmul_mismatch, WT_ERR_SHAPE, "MatMul node 'mm'"},
  {"tensor/garbage", c_tensor_pb_garbage, WT_ERR_PARSE, "not a valid serialized TensorProto (5 bytes)"},
  {"tensor/bfloat16", c_tensor_pb_dtype, WT_ERR_UNSUPPORTED, "tensor 't' has dtype bfloat16"},
  /* inputs at run time */
  {"run/wrong-shape", c_input_wrong_shape, WT_ERR_SHAPE, "input 'X' has shape [8,5]; expected [batch,4]"},
  {"run/wrong-rank", c_input_wrong_rank, WT_ERR_SHAPE, "input 'X' has shape [2,4,1]; expected [batch,4]"},
  {"run/wrong-dtype", c_input_wrong_dtype, WT_ERR_INVALID_ARG, "input 'X' has dtype int32; expected float"},
  {"run/unsupported-dtype", c_input_bad_dtype_code, WT_ERR_INVALID_ARG, "input 'X' has dtype double; expected float"},
  {"run/rank-9", c_input_rank_too_big, WT_ERR_INVALID_ARG, "input 'X': rank 9 is out of range 0..8"},
  {"run/negative-dim", c_input_negative_dim, WT_ERR_INVALID_ARG, "input 'X': dimension 0 is negative (-2)"},
  {"run/input-over-2^40", c_input_over_2_40, WT_ERR_SHAPE, "input 'X' has shape [4611686018427387904,4]: more than 2^40 elements"},
  {"run/input-zero-and-huge", c_input_zero_and_huge, WT_ERR_SHAPE, "input 'X' has shape [0,4611686018427387904,4611686018427387904]: more than 2^40 elements"},
  {"run/nan-input", c_input_nan, WT_OK, ""},
  {"run/input-index", c_input_index_range, WT_ERR_INVALID_ARG, "input index 3 is out of range (the model has 1 inputs)"},
  {"run/null-data", c_input_null_data, WT_ERR_INVALID_ARG, "input 'X': no data"},
  {"run/input-not-set", c_input_not_set, WT_ERR_INVALID_ARG, "input 'X' was not set"},
  {"run/output-before-run", c_output_before_run, WT_ERR_INVALID_ARG, "no successful run yet: outputs are not available"},
  {"run/huge-batch", c_huge_batch, WT_ERR_NO_MEMORY, "out of memory: the plan needs an arena of 1649267441664 bytes"},
  /* generate_artifacts */
  {"artifacts/requires-grad-unknown", c_rg_unknown, WT_ERR_INVALID_ARG, "requires_grad: 'nope' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/requires-grad-typo", c_rg_typo, WT_ERR_INVALID_ARG, "requires_grad: 'w' is not an initializer (parameter) of the model; did you mean 'W'? (parameters: W, B)"},
  {"artifacts/frozen-unknown", c_frozen_unknown, WT_ERR_INVALID_ARG, "frozen_params: 'ghost' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/no-float-initializers", c_no_float_initializers, WT_ERR_INVALID_ARG, "generate_artifacts: the model has no float initializers to train (only Constant nodes): its weights were folded into constants (exported in eval mode or with constant folding?); export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"},
  {"artifacts/anonymous-initializers", c_anonymous_initializers, WT_ERR_INVALID_ARG, "the model's 2 float initializers all have made-up names such as 'onnx::MatMul_7': its weights were folded into anonymous constants (exported in eval mode or with constant folding?); export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False), or name the ones to train in requires_grad"},
  {"artifacts/anonymous-initializers-named", c_anonymous_initializers_named, WT_ERR_INVALID_ARG, "requires_grad: 'fc.weight' is not an initializer (parameter) of the model (parameters: onnx::MatMul_7, onnx::Add_8); these are anonymous constants, not named weights: export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"},
  {"artifacts/anonymous-initializers-listed", c_anonymous_initializers_listed, WT_OK, ""},
  {"artifacts/requires-grad-frozen-overlap", c_rg_frozen_overlap, WT_ERR_INVALID_ARG, "parameter 'B' is listed in both requires_grad and frozen_params"},
  {"artifacts/requires-grad-input", c_rg_input_not_param, WT_ERR_INVALID_ARG, "requires_grad: 'X' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/requires-grad-int64", c_rg_int_param, WT_ERR_INVALID_ARG, "requires_grad: parameter 'K' is int64; only float parameters can be trained"},
  {"artifacts/requires-grad-duplicate", c_rg_duplicate, WT_OK, ""},
  {"artifacts/ort-format", c_ort_format, WT_ERR_UNSUPPORTED, "ort_format: webtrain writes ONNX artifacts only (ORT format is not supported)"},
  {"artifacts/custom-op-library", c_custom_op_library, WT_ERR_UNSUPPORTED, "custom_op_library: custom op libraries are not supported"},
  {"artifacts/additional-output-unknown", c_additional_output_unknown, WT_ERR_INVALID_ARG, "additional_output_names: 'nope' is not a value of the model"},
  {"artifacts/loss-input-unknown", c_loss_input_unknown, WT_ERR_INVALID_ARG, "loss_input_names: 'nope' is not a value of the model"},
  {"artifacts/loss-two-inputs", c_loss_two_inputs, WT_ERR_INVALID_ARG, "a built-in loss takes one model output; 2 loss_input_names were given"},
  {"artifacts/loss-reduction", c_loss_bad_reduction, WT_ERR_INVALID_ARG, "loss reduction 'median': expected mean, sum or none"},
  {"artifacts/loss-int-output", c_loss_int_output, WT_ERR_INVALID_ARG, "the loss input 'Yi' must be a float tensor of known rank"},
  {"artifacts/loss-name-taken", c_loss_name_taken, WT_ERR_INVALID_ARG, "but the model already has a value of that name"},
  {"artifacts/name-taken-accumulation-buffer", c_name_taken_buffer, WT_ERR_INVALID_ARG, "generate_artifacts: the model already has a value named 'W_grad.accumulation.buffer', the name ONNX Runtime's convention gives the gradient accumulation buffer of parameter W; rename that value in the model and export it again"},
  {"artifacts/name-taken-accumulation-out", c_name_taken_acc_out, WT_ERR_INVALID_ARG, "the model already has a value named 'B_grad.accumulation.out', the name ONNX Runtime's convention gives the gradient accumulator's output of parameter B; rename that value"},
  {"artifacts/name-taken-lazy-reset-grad", c_name_taken_reset, WT_ERR_INVALID_ARG, "the model already has a value named 'lazy_reset_grad', the name ONNX Runtime's convention gives the flag that resets gradient accumulation; rename that value"},
  {"artifacts/name-taken-grad (internal: renamed)", c_name_taken_grad, WT_OK, ""},
  {"artifacts/param-unused", c_param_unused, WT_ERR_INVALID_ARG, "the loss does not depend on parameter 'U' (list it in frozen_params instead of requires_grad)"},
  {"artifacts/garbage", c_artifacts_garbage, WT_ERR_PARSE, "generate_artifacts: not a valid ONNX model"},
  {"artifacts/no-outputs", c_artifacts_no_outputs, WT_ERR_INVALID_ARG, "the model has no output to compute a loss from"},
  /* checkpoints */
  {"checkpoint/empty", c_ckpt_empty, WT_ERR_PARSE, "truncated or corrupt checkpoint: 0 bytes, expected at least 8 (0 bytes is too short for a flatbuffer"},
  {"checkpoint/truncated-header", c_ckpt_truncated_header, WT_ERR_PARSE, "truncated or corrupt checkpoint: 6 bytes, expected at least 8 (6 bytes is too short for a flatbuffer"},
  {"checkpoint/truncated-half", c_ckpt_truncated_half, WT_ERR_PARSE, "truncated or corrupt checkpoint: 116 bytes, expected at least 180 (tensor #0 of module_state.requires_grad_params: offset is zero or points past the end (at byte 48 of 116))"},
  {"checkpoint/truncated-last-byte", c_ckpt_truncated_last, WT_ERR_PARSE, "truncated or corrupt checkpoint: 231 bytes, expected at least 232 (tensor 'B': vector of 12 elements (12 bytes) runs past the end"},
  {"checkpoint/truncated-three-quarters", c_ckpt_truncated_3_4, WT_ERR_PARSE, "truncated or corrupt checkpoint: 174 bytes, expected at least 180 ("},
  {"checkpoint/identifier", c_ckpt_identifier, WT_ERR_PARSE, "checkpoint: file identifier is 'ORTM', expected 'ODTC' (not an ONNX Runtime training checkpoint?)"},
  {"checkpoint/onnx-bytes", c_ckpt_onnx_bytes, WT_ERR_PARSE, "checkpoint: file identifier is 'bad_', expected 'ODTC'"},
  {"checkpoint/root-offset", c_ckpt_root_offset, WT_ERR_PARSE, "truncated or corrupt checkpoint: 232 bytes, expected at least 2147483636 (root table: table offset out of bounds or misaligned (at byte 2147483632"},
  {"checkpoint/root-unaligned", c_ckpt_root_unaligned, WT_ERR_PARSE, "checkpoint: root table: table offset out of bounds or misaligned"},
  {"checkpoint/vtable-offset", c_ckpt_vtable_offset, WT_ERR_PARSE, "truncated or corrupt checkpoint: 232 bytes, expected at least 2147483660 (root table: vtable offset out of bounds or misaligned"},
  {"checkpoint/version-7", c_ckpt_version, WT_ERR_UNSUPPORTED, "checkpoint: format version 7 is not supported (webtrain reads versions 1 and 2)"},
  {"checkpoint/module-state-offset", c_ckpt_module_state_offset, WT_ERR_PARSE, "checkpoint: module_state: offset is zero or points past the end"},
  {"checkpoint/bit-flips", c_ckpt_bitflips, WT_OK, ""},
  {"checkpoint/write-rank-9", c_ckpt_write_rank_9, WT_ERR_INVALID_ARG, "checkpoint: tensor 'p' has rank 9"},
  {"checkpoint/write-negative-dim", c_ckpt_write_negative_dim, WT_ERR_INVALID_ARG, "checkpoint: tensor 'p' has a negative dimension"},
  {"checkpoint/write-no-name", c_ckpt_write_no_name, WT_ERR_INVALID_ARG, "checkpoint: a tensor of module_state.requires_grad_params has no name"},
  {"checkpoint/duplicate-param", c_ckpt_duplicate_param, WT_ERR_PARSE, "checkpoint: parameter 'p' appears more than once"},
  {"checkpoint/nominal-train", c_ckpt_nominal_train, WT_ERR_INVALID_ARG, "has no data (a nominal checkpoint cannot be trained from)"},
  /* checkpoint vs model, the training runtime */
  {"train/checkpoint-shape-mismatch", c_ckpt_model_shape_mismatch, WT_ERR_SHAPE, "checkpoint parameter 'W' is float [4,5]; the training model expects float [4,3]"},
  {"train/checkpoint-missing-param", c_ckpt_missing_param, WT_ERR_INVALID_ARG, "training model: input 'B_grad.accumulation.buffer': 'B' is not a trainable parameter of the checkpoint"},
  {"train/checkpoint-param-dtype", c_ckpt_param_dtype, WT_ERR_SHAPE, "checkpoint parameter 'W' is int64 [4,3]; the training model expects float [4,3]"},
  {"train/checkpoint-frozen-but-trained", c_ckpt_frozen_but_trained, WT_ERR_INVALID_ARG, "'W' is not a trainable parameter of the checkpoint"},
  {"train/training-model-bytes", c_module_bad_training_bytes, WT_ERR_PARSE, "training model: not a valid ONNX model"},
  {"train/optimizer-model-is-eval", c_optimizer_model_is_eval, WT_ERR_UNSUPPORTED, "optimizer model: no com.microsoft AdamWOptimizer or SGDOptimizerV2 node"},
  {"train/wrong-shape", c_train_wrong_shape, WT_ERR_SHAPE, "input 'X' has shape [2,5]; expected [batch,4]"},
  {"train/wrong-dtype", c_train_wrong_dtype, WT_ERR_INVALID_ARG, "input 'X' has dtype int64; expected float"},
  {"train/batch-mismatch", c_train_batch_mismatch, WT_ERR_SHAPE, "input 'target' has shape [2,3]; expected [batch,3]"},
  {"train/input-index", c_train_input_index, WT_ERR_INVALID_ARG, "input index 7 is out of range (2 inputs)"},
  {"train/nan-input-nan-loss", c_train_nan_input, WT_ERR_RUNTIME, "the loss is NaN at this train step"},
  {"train/output-before-step", c_train_output_before_step, WT_ERR_INVALID_ARG, "no train step has run yet"},
  {"train/nan-learning-rate", c_optimizer_nan_lr, WT_ERR_INVALID_ARG, "learning rate nan: expected a number >= 0"},
  {"train/param-update-count", c_param_update_count, WT_ERR_INVALID_ARG, "parameter 'W' holds 12 float values; 5 were given"},
  {"train/param-update-index", c_param_update_index, WT_ERR_INVALID_ARG, "parameter index 99 is out of range"},
  {"train/params-copy-count", c_params_copy_count, WT_ERR_INVALID_ARG, "the parameter buffer holds 4 floats; the"},
  {"train/property-no-name", c_property_no_name, WT_ERR_INVALID_ARG, "a property needs a name"},
  {"train/export-unknown-output", c_export_unknown_output, WT_ERR_INVALID_ARG, "export: 'nope' is not a value of the eval model"},
  {"train/export-no-outputs", c_export_no_outputs, WT_ERR_INVALID_ARG, "name at least one output to export"},
  {"train/recovers-after-error", c_train_recovers, WT_OK, ""},
  /* regressions from the fuzzers */
  {"fuzz/reduce-no-scratch", c_fuzz_reduce_no_scratch, WT_OK, ""},
  {"fuzz/resize-inf-scale", c_fuzz_resize_inf_scale, WT_ERR_INVALID_ARG, "scales[0] = inf; expected a positive value"},
  {"fuzz/conv-transpose-empty", c_fuzz_conv_transpose_empty, WT_OK, ""},
  {"fuzz/gru-empty-omitted-y", c_fuzz_gru_empty_omitted_y, WT_OK, ""},
  {"fuzz/empty-graph", c_fuzz_empty_graph, WT_OK, ""},
  {"fuzz/empty-tensor-pb", c_fuzz_empty_tensor_pb, WT_OK, ""},
  {"fuzz/ckpt-duplicate-momentum", c_fuzz_ckpt_duplicate_momentum, WT_ERR_PARSE, "is given twice"},
  {"fuzz/ckpt-zero-and-huge-dims", c_fuzz_ckpt_zero_and_huge_dims, WT_ERR_PARSE, "shape [1099511627776,1099511627776,0] has more than 2^32 elements"},
  {"fuzz/loss-on-bn-stat", c_fuzz_loss_on_bn_stat, WT_ERR_UNSUPPORTED, "eval model runs BatchNormalization in inference mode"},
};

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  {
    size_t len;
    uint8_t *bytes = pack(base_model(), &len);
    wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
    CHECK_OK(wt_generate_artifacts(bytes, len, &o, &g_art));
    arena_reset();
    if (wt_check_failures) CHECK_DONE();
  }
  int n = (int)(sizeof CASES / sizeof CASES[0]), run = 0;
  for (int i = 0; i < n; i++) {
    const bad_case *c = &CASES[i];
    if (only && !strstr(c->name, only)) continue;
    run++;
    wt_error_clear();
    int rc = c->fn();
    const char *msg = wt_last_error();
    int ok = rc == c->code && (c->code == WT_OK || strstr(msg, c->expect) != NULL);
    if (!ok) {
      fprintf(stderr, "FAIL %s: status %d, expected %d\n  message:  %s\n  expected: %s\n", c->name,
              rc, c->code, msg, c->expect);
      wt_check_failures++;
    } else if (getenv("WT_BAD_INPUT_VERBOSE")) {
      printf("ok   %-40s %s\n", c->name, rc ? msg : "(succeeds)");
    }
    arena_reset();
  }
  free(g_allocs);
  wt_artifacts_free(&g_art);
  if (only && run == 0) { /* a filter that names no case ran nothing: that is no pass */
    fprintf(stderr, "FAIL: no bad-input case matches '%s'\n", only);
    wt_check_failures++;
  }
  printf("%d bad-input cases, %d failed\n", run, wt_check_failures);
  CHECK_DONE();
}
