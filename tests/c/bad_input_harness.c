/* The bad-input suite's shared harness (see bad_input_harness.h). */
#include "bad_input_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/checkpoint.h"
#include "io/onnx_io.h"

/* ---- a per-case arena: every builder allocation is freed after the case ------------------ */

static void **g_allocs;
static int g_n_allocs, g_cap_allocs;

void *A(size_t n) {
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

char *S(const char *s) {
  char *p = A(strlen(s) + 1);
  memcpy(p, s, strlen(s) + 1);
  return p;
}

/* ---- protobuf builders ------------------------------------------------------------------- */

Onnx__ValueInfoProto *value_info(const char *name, int dtype, int rank, const int64_t *dims,
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
Onnx__TensorProto *tensor(const char *name, int dtype, int rank, const int64_t *dims,
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

Onnx__NodeProto *node(const char *op, const char *name, int n_in, const char *const *ins,
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

Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type) {
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

const float W_DATA[12] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, 0.8f, -0.9f, 1.0f, 0.2f, -0.1f};
const float B_DATA[3] = {0.01f, 0.02f, -0.03f};

/* The base model: Y[batch,3] = MatMul(X[batch,4], W[4,3]) + B[3]; valid and trainable. */
model *base_model(void) {
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

uint8_t *pack(const model *b, size_t *len) {
  *len = onnx__model_proto__get_packed_size(&b->m);
  uint8_t *bytes = A(*len);
  onnx__model_proto__pack(&b->m, bytes);
  return bytes;
}

int read_model(const model *b) {
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_graph *g = NULL;
  int rc = wt_onnx_read(bytes, len, NULL, &g);
  wt_graph_free(g);
  return rc;
}

/* Creates a session and runs it once on X (float [rows, cols] unless dtype/rank say otherwise). */
int run_model_x(const model *b, int dtype, int rank, const int64_t *dims, float fill) {
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

int run_model(const model *b) { return run_model_x(b, WT_FLOAT, 2, (int64_t[]){2, 4}, 0.5f); }

/* Runs a model file: every declared input gets its declared shape (symbolic dims 2), float
 * inputs hold `fill`, the others zeros. */
int run_file(const char *path, float fill) {
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

wt_artifacts g_art;   /* MSE + AdamW over W and B */

int gen(const model *b, const wt_artifacts_opts *o) {
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts a;
  int rc = wt_generate_artifacts(bytes, len, o, &a);
  if (!rc) wt_artifacts_free(&a);
  return rc;
}

int gen_with(const char *const *req, int n_req, const char *const *frozen, int n_frozen) {
  wt_artifacts_opts o = {.requires_grad = req, .n_requires_grad = n_req, .frozen_params = frozen,
                         .n_frozen_params = n_frozen, .loss = {.type = WT_LOSS_TYPE_MSE},
                         .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(base_model(), &o);
}

int load_ckpt(const uint8_t *bytes, size_t len) {
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
uint8_t *ckpt_copy(size_t *len) {
  *len = g_art.checkpoint.len;
  uint8_t *c = A(*len);
  memcpy(c, g_art.checkpoint.data, *len);
  return c;
}

uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
void wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

/* Where field `id` of the table at `table` is stored (0 when absent). */
uint32_t fb_field(const uint8_t *b, uint32_t table, int id) {
  uint32_t vt = table - rd32(b + table);
  uint16_t vt_len = (uint16_t)(b[vt] | b[vt + 1] << 8);
  if (4 + 2 * id >= vt_len) return 0;
  uint16_t off = (uint16_t)(b[vt + 4 + 2 * id] | b[vt + 5 + 2 * id] << 8);
  return off ? table + off : 0;
}

void close_run(train_run *r) {
  wt_optimizer_free(r->o);
  wt_module_free(r->m);
  wt_state_free(r->s);
  memset(r, 0, sizeof *r);
}

int open_run(train_run *r, const wt_artifacts *a) {
  memset(r, 0, sizeof *r);
  WT_TRY(wt_state_load(a->checkpoint.data, a->checkpoint.len, &r->s));
  WT_TRY(wt_module_create(r->s, a->training_model.data, a->training_model.len, a->eval_model.data,
                          a->eval_model.len, &r->m));
  return wt_optimizer_create(r->s, a->optimizer_model.data, a->optimizer_model.len, &r->o);
}

/* One train step on x [rows,4] and target [rows,3]. */
int train_step(train_run *r, int64_t rows, int64_t cols, float xfill, int dtype) {
  float *x = A(sizeof(float) * (size_t)(rows * cols + 1)), *t = A(sizeof(float) * (size_t)(rows * 3 + 1));
  for (int64_t i = 0; i < rows * cols; i++) x[i] = xfill;
  WT_TRY(wt_module_set_input(r->m, 0, 0, dtype, 2, (int64_t[]){rows, cols}, x));
  WT_TRY(wt_module_set_input(r->m, 0, 1, WT_FLOAT, 2, (int64_t[]){rows, 3}, t));
  return wt_module_train_step(r->m);
}
/* ---- the table runner ------------------------------------------------------------------- */

int bad_input_main(int argc, char **argv, const bad_case *cases, int n_cases) {
  const char *only = argc > 1 ? argv[1] : NULL;
  {
    size_t len;
    uint8_t *bytes = pack(base_model(), &len);
    wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
    CHECK_OK(wt_generate_artifacts(bytes, len, &o, &g_art));
    arena_reset();
    if (wt_check_failures) CHECK_DONE();
  }
  int run = 0;
  for (int i = 0; i < n_cases; i++) {
    const bad_case *c = &cases[i];
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
