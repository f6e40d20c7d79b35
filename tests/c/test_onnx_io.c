/* ONNX reader/writer: round trips of real models, TensorProto storage variants, and the errors
 * a user gets for malformed or unsupported files. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/onnx_io.h"
#include "onnx.pb-c.h"
#include "webtrain.h"

#ifndef WT_SOURCE_DIR
#define WT_SOURCE_DIR "."
#endif

static uint8_t *pack_model(Onnx__ModelProto *mp, size_t *len) {
  *len = onnx__model_proto__get_packed_size(mp);
  uint8_t *buf = malloc(*len);
  onnx__model_proto__pack(mp, buf);
  return buf;
}

/* A one-node model "y = op(x)" built directly as protobuf, so tests can plant defects. */
typedef struct tiny {
  Onnx__ModelProto mp;
  Onnx__GraphProto gp;
  Onnx__NodeProto np;
  Onnx__NodeProto *nodes[1];
  Onnx__ValueInfoProto in, out, *ins[1], *outs[1];
  Onnx__TypeProto tin, tout;
  Onnx__TypeProto__Tensor ttin, ttout;
  Onnx__OperatorSetIdProto opset, *opsets[1];
  char *node_in[2], *node_out[1];
} tiny;

static void tiny_init(tiny *t, const char *op_type) {
  memset(t, 0, sizeof *t);
  onnx__model_proto__init(&t->mp);
  onnx__graph_proto__init(&t->gp);
  onnx__node_proto__init(&t->np);
  onnx__value_info_proto__init(&t->in);
  onnx__value_info_proto__init(&t->out);
  onnx__type_proto__init(&t->tin);
  onnx__type_proto__init(&t->tout);
  onnx__type_proto__tensor__init(&t->ttin);
  onnx__type_proto__tensor__init(&t->ttout);
  onnx__operator_set_id_proto__init(&t->opset);
  t->opset.domain = "";
  t->opset.has_version = 1;
  t->opset.version = 14;
  t->opsets[0] = &t->opset;
  t->mp.n_opset_import = 1;
  t->mp.opset_import = t->opsets;
  t->mp.has_ir_version = 1;
  t->mp.ir_version = 8;
  t->mp.graph = &t->gp;
  t->ttin.has_elem_type = t->ttout.has_elem_type = 1;
  t->ttin.elem_type = t->ttout.elem_type = 1;
  t->tin.value_case = t->tout.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tin.tensor_type = &t->ttin;
  t->tout.tensor_type = &t->ttout;
  t->in.name = "x";
  t->in.type = &t->tin;
  t->out.name = "y";
  t->out.type = &t->tout;
  t->ins[0] = &t->in;
  t->outs[0] = &t->out;
  t->gp.n_input = 1;
  t->gp.input = t->ins;
  t->gp.n_output = 1;
  t->gp.output = t->outs;
  t->node_in[0] = "x";
  t->node_out[0] = "y";
  t->np.op_type = (char *)op_type;
  t->np.name = "the_node";
  t->np.n_input = 1;
  t->np.input = t->node_in;
  t->np.n_output = 1;
  t->np.output = t->node_out;
  t->nodes[0] = &t->np;
  t->gp.n_node = 1;
  t->gp.node = t->nodes;
}

static int load_tiny(tiny *t, wt_graph **g) {
  size_t len;
  uint8_t *buf = pack_model(&t->mp, &len);
  int rc = wt_onnx_read(buf, len, NULL, g);
  free(buf);
  return rc;
}

static int contains(const char *hay, const char *needle) {
  if (!strstr(hay, needle)) {
    fprintf(stderr, "  message: %s\n  lacks:   %s\n", hay, needle);
    return 0;
  }
  return 1;
}

static void test_round_trip(const char *path) {
  wt_graph *g = NULL, *g2 = NULL;
  CHECK_OK(wt_onnx_read_file(path, &g));
  if (!g) return;
  uint8_t *bytes;
  size_t len;
  CHECK_OK(wt_onnx_write(g, &bytes, &len));
  CHECK_OK(wt_onnx_read(bytes, len, NULL, &g2));
  if (g2) {
    CHECK(g2->n_nodes == g->n_nodes);
    CHECK(g2->n_inputs == g->n_inputs && g2->n_outputs == g->n_outputs);
    CHECK(g2->n_values == g->n_values);
    for (int i = 0; i < g->n_nodes && i < g2->n_nodes; i++) {
      CHECK(strcmp(g->nodes[i].op_type, g2->nodes[i].op_type) == 0);
      CHECK(g->nodes[i].n_attrs == g2->nodes[i].n_attrs);
    }
    for (int v = 0; v < g->n_values; v++) {
      int w = wt_graph_find(g2, g->values[v].name);
      CHECK(w >= 0);
      if (w < 0) continue;
      CHECK(g->values[v].nbytes == g2->values[w].nbytes);
      if (g->values[v].nbytes)
        CHECK(memcmp(g->values[v].data, g2->values[w].data, g->values[v].nbytes) == 0);
      CHECK(g->values[v].rank == g2->values[w].rank);
    }
    /* symbolic batch dim survives */
    const wt_value *in = &g2->values[g2->inputs[0]];
    CHECK(in->dims[0] == -1 && wt_value_dim_param(in, 0) && strcmp(wt_value_dim_param(in, 0), "batch") == 0);
    CHECK(wt_graph_opset(g2, "") == wt_graph_opset(g, ""));
  }
  free(bytes);
  wt_graph_free(g);
  wt_graph_free(g2);
}

static void test_errors(void) {
  wt_graph *g = NULL;
  tiny t;

  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  CHECK(wt_onnx_read(junk, sizeof junk, NULL, &g) == WT_ERR_PARSE && g == NULL);
  CHECK(contains(wt_error_message(), "not a valid ONNX model"));

  /* nested graph: rejected naming the node and attribute */
  tiny_init(&t, "If");
  Onnx__AttributeProto attr = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&attr};
  Onnx__GraphProto sub = ONNX__GRAPH_PROTO__INIT;
  attr.name = "then_branch";
  attr.has_type = 1;
  attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  attr.g = &sub;
  t.np.n_attribute = 1;
  t.np.attribute = attrs;
  CHECK(load_tiny(&t, &g) == WT_ERR_UNSUPPORTED);
  CHECK(contains(wt_error_message(), "If node 'the_node': attribute 'then_branch' holds a nested graph"));

  /* a node input nothing defines (missing initializer) */
  tiny_init(&t, "Add");
  char *two[2] = {"x", "w"};
  t.np.n_input = 2;
  t.np.input = two;
  CHECK(load_tiny(&t, &g) == WT_ERR_PARSE);
  CHECK(contains(wt_error_message(), "Add node 'the_node': input 'w' is not a graph input, an initializer"));

  /* unsupported dtype on an input */
  tiny_init(&t, "Relu");
  t.ttin.elem_type = 11;
  CHECK(load_tiny(&t, &g) == WT_ERR_UNSUPPORTED);
  CHECK(contains(wt_error_message(), "graph input 'x' has dtype double"));

  /* initializer whose raw_data disagrees with its dims */
  tiny_init(&t, "Add");
  Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, *inits[1] = {&w};
  int64_t wdims[1] = {4};
  float wdata[3] = {1, 2, 3};
  w.name = "w";
  w.has_data_type = 1;
  w.data_type = 1;
  w.n_dims = 1;
  w.dims = wdims;
  w.has_raw_data = 1;
  w.raw_data.data = (uint8_t *)wdata;
  w.raw_data.len = sizeof wdata;
  t.gp.n_initializer = 1;
  t.gp.initializer = inits;
  t.np.n_input = 2;
  t.np.input = two;
  CHECK(load_tiny(&t, &g) == WT_ERR_PARSE);
  CHECK(contains(wt_error_message(), "initializer 'w' has 12 bytes of raw_data; float [4] needs 16"));

  /* the same initializer through float_data is fine, and external data with '..' is refused */
  w.has_raw_data = 0;
  float four[4] = {1, 2, 3, 4};
  w.n_float_data = 4;
  w.float_data = four;
  CHECK_OK(load_tiny(&t, &g));
  if (g) {
    int v = wt_graph_find(g, "w");
    CHECK(v >= 0 && ((float *)g->values[v].data)[3] == 4.0f);
    wt_graph_free(g);
    g = NULL;
  }
  Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *ext[1] = {&loc};
  loc.key = "location";
  loc.value = "../../etc/passwd";
  w.n_float_data = 0;
  w.n_external_data = 1;
  w.external_data = ext;
  w.has_data_location = 1;
  w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  CHECK(load_tiny(&t, &g) == WT_ERR_PARSE);
  CHECK(contains(wt_error_message(), "must be a relative path inside the model's directory"));

  /* an op webtrain lacks: named with type, domain, opset and node, at session create */
  tiny_init(&t, "FancyOp");
  t.np.domain = "com.example";
  size_t len;
  uint8_t *buf = pack_model(&t.mp, &len);
  wt_session *s = NULL;
  CHECK(wt_session_create(buf, len, &s) == WT_ERR_UNSUPPORTED);
  CHECK(s == NULL);
  CHECK(contains(wt_last_error(), "webtrain does not support 1 op of this model: FancyOp (com.example, opset 0; node 'the_node')"));
  free(buf);
  wt_session_free(s);
}

int main(void) {
  const char *models[] = {"mlp_ce_adamw", "cnn_bn_ce_sgd", "tiny_transformer_frozen_adamw",
                          "two_output_custom_loss"};
  char path[1024];
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    snprintf(path, sizeof path, "%s/tests/golden/cases/%s/model.onnx", WT_SOURCE_DIR, models[i]);
    test_round_trip(path);
  }
  test_errors();
  CHECK_DONE();
}
