/* The bad-input suite, ONNX models: malformed and hostile model bytes, graphs,
 * initializers, external data, attributes and ops, inputs at run time and the fuzzers' regression
 * files, each with the status and the exact error text expected. Nothing may crash, leak or trip
 * a sanitizer. Hostile ONNX models are built at run time from protobuf-c messages (a small valid
 * base model, then one defect per case; bad_input_harness.h); the fuzzers' regression inputs are
 * committed under tests/bad_input/files/ (see its README). The training side (artifacts,
 * checkpoints, training calls) is test_bad_input_train.c.
 *
 * A case returns a status; the table says which status and which substring of wt_last_error()
 * are expected (code 0: the call must succeed, e.g. a fuzzer crash that now works). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad_input_harness.h"
#include "io/onnx_io.h"
#include "runtime/planner.h"

#define FILES WT_SOURCE_DIR "/tests/bad_input/files/"

/* Under AddressSanitizer, an allocation the machine cannot satisfy returns NULL (as malloc does
 * natively and in wasm) instead of aborting: the huge-batch case checks the error it causes. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

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
  int rc = wt_plan_build(g, &in, NULL, &p);
  wt_plan_free(p);
  wt_graph_free(g);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", wt_last_error());
  WT_TRY(run_model(base_model()));
  return rc ? wt_errorf(rc, "%s", msg) : WT_OK;
}

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
  return bad_input_main(argc, argv, CASES, (int)(sizeof CASES / sizeof CASES[0]));
}
