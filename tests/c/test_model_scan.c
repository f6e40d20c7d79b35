/* The streamed model reader (io/onnx_scan.h): a model with its weights inside, pushed in pieces
 * of any size or with the weights passed by position, gives one skeleton whose references point
 * at the weights in the file; the record lists them, the inputs and outputs and the base
 * fingerprints a model carries, which the generator writes; damaged files get errors naming the
 * byte or the tensor. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/onnx_scan.h"
#include "onnx.pb-c.h"

enum { N = 32 };

/* y = MatMul(x, W) + b: W [N, N] (4 KiB, left out), b [N] (kept). extra: W also gets an
 * external_data entry after its raw_data (a damaged tensor). */
static uint8_t *make_model(size_t *len, float *w, int extra) {
  Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
  Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
  Onnx__NodeProto mm = ONNX__NODE_PROTO__INIT, add = ONNX__NODE_PROTO__INIT;
  Onnx__TensorProto tw = ONNX__TENSOR_PROTO__INIT, tb = ONNX__TENSOR_PROTO__INIT;
  Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
  Onnx__TypeProto ty = ONNX__TYPE_PROTO__INIT;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, d1 = d0;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  static float b[N];
  for (int i = 0; i < N * N; i++) w[i] = (float)(i % 97) * 0.01f;
  for (int i = 0; i < N; i++) b[i] = (float)i;
  int64_t wd[2] = {N, N}, bd[1] = {N};
  tw.name = "W", tw.has_data_type = 1, tw.data_type = WT_FLOAT, tw.n_dims = 2, tw.dims = wd;
  tw.has_raw_data = 1, tw.raw_data.len = sizeof(float) * N * N, tw.raw_data.data = (uint8_t *)w;
  Onnx__StringStringEntryProto *locs[1] = {&loc};
  loc.key = "location", loc.value = "elsewhere.bin";
  if (extra) tw.n_external_data = 1, tw.external_data = locs;
  tb.name = "b", tb.has_data_type = 1, tb.data_type = WT_FLOAT, tb.n_dims = 1, tb.dims = bd;
  tb.has_raw_data = 1, tb.raw_data.len = sizeof b, tb.raw_data.data = (uint8_t *)b;
  char *mm_in[2] = {"x", "W"}, *mm_out[1] = {"h"}, *add_in[2] = {"h", "b"}, *add_out[1] = {"y"};
  mm.op_type = "MatMul", mm.n_input = 2, mm.input = mm_in, mm.n_output = 1, mm.output = mm_out;
  add.op_type = "Add", add.n_input = 2, add.input = add_in, add.n_output = 1, add.output = add_out;
  d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM, d0.dim_param = "batch";
  d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE, d1.dim_value = N;
  Onnx__TensorShapeProto__Dimension *dims[2] = {&d0, &d1};
  shape.n_dim = 2, shape.dim = dims;
  tt.has_elem_type = 1, tt.elem_type = WT_FLOAT, tt.shape = &shape;
  ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, ty.tensor_type = &tt;
  in.name = "x", in.type = &ty;
  out.name = "y", out.type = &ty;
  Onnx__NodeProto *nodes[2] = {&mm, &add};
  Onnx__TensorProto *inits[2] = {&tw, &tb};
  Onnx__ValueInfoProto *ins[1] = {&in}, *outs[1] = {&out};
  gp.name = "g", gp.n_node = 2, gp.node = nodes, gp.n_initializer = 2, gp.initializer = inits;
  gp.n_input = 1, gp.input = ins, gp.n_output = 1, gp.output = outs;
  opset.domain = "", opset.has_version = 1, opset.version = 17;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &gp, mp.n_opset_import = 1, mp.opset_import = opsets;
  *len = onnx__model_proto__get_packed_size(&mp);
  uint8_t *p = malloc(*len);
  onnx__model_proto__pack(&mp, p);
  return p;
}

/* Scans p in pieces of `piece` bytes (passing the left-out ranges when pass); the scan, finished. */
static int scan(const uint8_t *p, size_t len, uint64_t size, size_t piece, int pass, wt_scan **out) {
  WT_TRY(wt_scan_new("m.onnx", size, 4096, out));
  for (size_t at = 0; at < len;) {
    uint64_t skip = pass ? wt_scan_skip(*out) : 0;
    if (skip) {
      WT_TRY(wt_scan_pass(*out, skip));
      at += (size_t)skip;
      continue;
    }
    size_t n = len - at < piece ? len - at : piece;
    WT_TRY(wt_scan_push(*out, p + at, n));
    at += n;
  }
  return wt_scan_finish(*out);
}

static const uint8_t *g_file;
static int read_file_itself(void *user, const char *location, uint64_t offset, uint64_t length, void *dst) {
  (void)user;
  CHECK(!strcmp(location, "m.onnx"));
  memcpy(dst, g_file + offset, (size_t)length);
  return WT_OK;
}

static void test_pieces_and_record(void) {
  static float w[N * N];
  size_t len;
  uint8_t *model = make_model(&len, w, 0);
  wt_scan *whole = NULL;
  CHECK_OK(scan(model, len, len, len, 0, &whole));
  CHECK(wt_scan_inside_count(whole) == 1);
  const wt_inside_ref *r = wt_scan_inside(whole, 0);
  CHECK(!strcmp(r->tensor, "W") && r->length == sizeof w && r->dtype == WT_FLOAT);
  CHECK(!memcmp(model + r->offset, w, sizeof w));
  size_t pieces[] = {1, 7, 4096};
  for (int k = 0; k < 3; k++)
    for (int pass = 0; pass < 2; pass++) {
      wt_scan *s = NULL;
      CHECK_OK(scan(model, len, pass ? len : WT_SCAN_SIZE_UNKNOWN, pieces[k], pass, &s));
      CHECK(wt_scan_hash(s) == wt_scan_hash(whole) && wt_scan_inside_count(s) == 1);
      CHECK(wt_scan_offset(s) == len);
      wt_scan_free(s);
    }
  wt_model_record *rec = NULL;
  CHECK_OK(wt_model_record_of_scan(whole, &rec));
  CHECK(rec->scanned && rec->self.size == len && rec->len < len - sizeof w + 200);
  CHECK(rec->n_external == 1 && !strcmp(rec->external[0].location, "m.onnx") && rec->external[0].offset == rec->inside[0].offset);
  CHECK(rec->n_inputs == 1 && !strcmp(rec->inputs[0].name, "x") && rec->inputs[0].rank == 2);
  CHECK(rec->inputs[0].dims[0] < 0 && !strcmp(rec->inputs[0].dim_params[0], "batch") && rec->inputs[0].dims[1] == N);
  CHECK(rec->n_outputs == 1 && !strcmp(rec->outputs[0].name, "y"));
  /* the skeleton reads with its weights from the file itself */
  g_file = model;
  wt_onnx_read_opts opts = {.read_external = read_file_itself};
  wt_graph *g = NULL;
  CHECK_OK(wt_onnx_read(rec->bytes, rec->len, &opts, &g));
  int v = g ? wt_graph_find(g, "W") : -1;
  CHECK(v >= 0 && !memcmp(g->values[v].data, w, sizeof w));
  /* the generator writes the fingerprint into the models that refer to the file */
  wt_artifacts_opts o = {0};
  const char *train[1] = {"b"};
  o.requires_grad = train, o.n_requires_grad = 1, o.loss.type = WT_LOSS_TYPE_MSE, o.optimizer.type = WT_OPTIM_ADAMW;
  o.base = rec->self;
  wt_artifacts a;
  CHECK_OK(wt_generate_artifacts_graph(g, &o, &a));
  wt_bytes *models[2] = {&a.training_model, &a.eval_model};
  for (int k = 0; k < 2; k++) {
    wt_model_record *t = NULL;
    uint8_t *copy = malloc(models[k]->len);
    memcpy(copy, models[k]->data, models[k]->len);
    CHECK_OK(wt_model_record_read(copy, models[k]->len, &t));
    CHECK(t && t->n_prints == 1 && !strcmp(t->prints[0].location, "m.onnx"));
    CHECK(t && t->prints[0].size == len && t->prints[0].hash == rec->self.hash);
    wt_model_record_free(t);
  }
  wt_artifacts_free(&a);
  wt_model_record_free(rec);
  wt_scan_free(whole);
  free(model);
}

static int message_has(const char *part) { return strstr(wt_error_message(), part) != NULL; }

static void test_bad_input(void) {
  static float w[N * N];
  size_t len;
  uint8_t *model = make_model(&len, w, 0);
  wt_scan *s = NULL;
  /* the file is cut short inside the weights: its size says so before they are read */
  CHECK(scan(model, len / 2, len / 2, 64, 0, &s) == WT_ERR_IO);
  CHECK(message_has("tensor 'W' has 4096 bytes at offset") && message_has("past the file's end"));
  wt_scan_free(s);
  /* a stream cut short: the end says where */
  CHECK(scan(model, len / 2, WT_SCAN_SIZE_UNKNOWN, 64, 0, &s) == WT_ERR_PARSE);
  CHECK(message_has("the model ends at byte") && message_has("inside a message"));
  wt_scan_free(s);
  /* not a model: a varint that does not end */
  uint8_t junk[64];
  memset(junk, 0xff, sizeof junk);
  CHECK(scan(junk, sizeof junk, sizeof junk, 16, 0, &s) == WT_ERR_PARSE);
  CHECK(message_has("a varint longer than 10 bytes at byte"));
  CHECK(wt_scan_push(s, junk, 1) != WT_OK); /* a failed scan stays failed */
  wt_scan_free(s);
  /* field number 0 */
  uint8_t zero[2] = {0x02, 0x00};
  CHECK(scan(zero, 2, 2, 1, 0, &s) == WT_ERR_PARSE && message_has("field number 0 at byte"));
  wt_scan_free(s);
  /* passing more than the scanner skips */
  CHECK_OK(wt_scan_new("m.onnx", len, 4096, &s));
  CHECK(wt_scan_pass(s, 1) == WT_ERR_INVALID_ARG);
  wt_scan_free(s);
  free(model);
  /* a tensor with data inside and external_data */
  model = make_model(&len, w, 1);
  CHECK(scan(model, len, len, 256, 0, &s) == WT_ERR_PARSE && message_has("tensor 'W' has data inside and external_data"));
  wt_scan_free(s);
  free(model);
}

/* A model with nothing left out scans to itself: every field kind copied through, here a fixed32
 * after a tensor's name (what follows a name is no longer the name). */
static void test_copied_through(void) {
  const uint8_t model[] = {0x3a, 0x0c, 0x2a, 0x0a, 0x42, 0x01, 'a', 0x25, 1, 2, 3, 4, 0x10, 0x01, 0x08, 0x01};
  for (size_t piece = 1; piece <= sizeof model; piece++) {
    wt_scan *s = NULL;
    CHECK_OK(scan(model, sizeof model, sizeof model, piece, 0, &s));
    CHECK(wt_scan_hash(s) == wt_fnv1a(model, sizeof model) && wt_scan_inside_count(s) == 0);
    wt_scan_free(s);
  }
}

int main(void) {
  test_copied_through();
  test_pieces_and_record();
  test_bad_input();
  CHECK_DONE();
}
