/* Finite-difference checks of the LSTM / GRU gradients (LSTMTraining + LSTMGrad, GRUTraining +
 * GRUGrad) on seq 3, batch 2, input 3, hidden 4: every direction, with and without bias and
 * initial states, peepholes, full-length sequence_lens, linear_before_reset; plus the refusals. */
#include <string.h>

#include "autodiff/autodiff.h"
#include "check.h"
#include "gradcheck.h"
#include "shape/shape.h"

enum { S = 3, BT = 2, IN = 3, H = 4 };

static const char *g_dir = "forward";
static int g_lbr, g_no_hidden_size;
static void rnn_attrs(wt_graph *g, int node) {
  if (!g_no_hidden_size) wt_node_set_int(g, node, "hidden_size", H);
  wt_node_set_string(g, node, "direction", g_dir);
  if (g_lbr) wt_node_set_int(g, node, "linear_before_reset", 1);
}

static gc_arg arg(int rank, int64_t d0, int64_t d1, int64_t d2) {
  gc_arg a = {.rank = rank, .dims = {d0, d1, d2}};
  return a;
}
static const gc_arg ABSENT = {.absent = 1};

/* X W R B SL H0 C0 P */
static int lstm_case(const char *label, const char *dir, int bias, int lens, int init, int peep,
                     const char *op, const char *domain) {
  static int32_t full[BT] = {S, S};
  int D = strcmp(dir, "bidirectional") ? 1 : 2;
  gc_arg a[8] = {arg(3, S, BT, IN), arg(3, D, 4 * H, IN), arg(3, D, 4 * H, H),
                 bias ? arg(2, D, 8 * H, 0) : ABSENT, ABSENT, init ? arg(3, D, BT, H) : ABSENT,
                 init ? arg(3, D, BT, H) : ABSENT, peep ? arg(2, D, 3 * H, 0) : ABSENT};
  if (lens) a[4] = (gc_arg){.dtype = WT_INT32, .rank = 1, .dims = {BT}, .data = full, .constant = 1};
  g_dir = dir;
  g_lbr = 0;
  gc_opts o = {.n_out = 3, .domain = domain};
  return gradcheck(label, op, &o, 8, a, rnn_attrs);
}

/* X W R B SL H0 */
static int gru_case(const char *label, const char *dir, int bias, int init, int lbr, const char *op,
                    const char *domain) {
  int D = strcmp(dir, "bidirectional") ? 1 : 2;
  gc_arg a[6] = {arg(3, S, BT, IN), arg(3, D, 3 * H, IN), arg(3, D, 3 * H, H),
                 bias ? arg(2, D, 6 * H, 0) : ABSENT, ABSENT, init ? arg(3, D, BT, H) : ABSENT};
  g_dir = dir;
  g_lbr = lbr;
  gc_opts o = {.n_out = 2, .domain = domain};
  return gradcheck(label, op, &o, 6, a, rnn_attrs);
}

/* A configuration ORT's training kernels do not support fails at gradient building, saying why. */
static void refused(const char *attr, const char *expect) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  const int64_t dims[3][3] = {{S, BT, IN}, {1, 4 * H, IN}, {1, 4 * H, H}};
  int in[3], y = wt_graph_value(g, "y");
  for (int i = 0; i < 3; i++) {
    char name[8] = {'x', (char)('0' + i), 0};
    in[i] = wt_graph_value(g, name);
    g->values[in[i]].dtype = WT_FLOAT;
    wt_value_set_shape(g, in[i], 3, dims[i]);
    wt_graph_add_input(g, in[i]);
  }
  int n = wt_graph_add_node(g, "LSTM", "", "lstm", 3, in, 1, &y);
  wt_node_set_int(g, n, "hidden_size", H);
  if (!strcmp(attr, "clip")) wt_node_set_float(g, n, "clip", 1.0f);
  if (!strcmp(attr, "layout")) wt_node_set_int(g, n, "layout", 1);
  CHECK_OK(wt_graph_infer_shapes(g));
  int grad;
  CHECK(wt_autodiff(g, y, 1, &in[1], &grad) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), expect) != NULL);
  wt_graph_free(g);
}

/* The emitted graph has ORT's shape: LSTM -> com.microsoft LSTMTraining with outputs
 * (HAll, Ht, -, CAll, IOFC) even when the model omitted Y, and LSTMGrad(X, W, R, SL, H0, C0,
 * HAll, CAll, IOFC, dHAll, dHt) with the forward's attributes, dX omitted (X is no parameter). */
static void structure(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  const int64_t dims[4][3] = {{S, BT, IN}, {1, 4 * H, IN}, {1, 4 * H, H}, {1, 8 * H, 0}};
  int in[4], yh = wt_graph_value(g, "y_h");
  for (int i = 0; i < 4; i++) {
    char name[8] = {'x', (char)('0' + i), 0};
    in[i] = wt_graph_value(g, name);
    g->values[in[i]].dtype = WT_FLOAT;
    wt_value_set_shape(g, in[i], i == 3 ? 2 : 3, dims[i]);
    wt_graph_add_input(g, in[i]);
  }
  int n = wt_graph_add_node(g, "LSTM", "", "lstm", 4, in, 2, (int[]){-1, yh});
  wt_node_set_int(g, n, "hidden_size", H);
  wt_node_set_int(g, n, "layout", 0);
  CHECK_OK(wt_graph_infer_shapes(g));
  int grads[3];
  CHECK_OK(wt_autodiff(g, yh, 3, &in[1], grads));
  const wt_node *f = &g->nodes[n];
  CHECK(!strcmp(f->op_type, "LSTMTraining") && !strcmp(f->domain, "com.microsoft"));
  CHECK(f->n_outputs == 5 && f->outputs[0] >= 0 && f->outputs[2] < 0 && f->outputs[3] >= 0 && f->outputs[4] >= 0);
  CHECK(wt_node_attr(f, "layout") == NULL && wt_attr_int(f, "hidden_size", 0) == H);
  CHECK(wt_graph_opset(g, "com.microsoft") == 1);
  int found = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *m = &g->nodes[i];
    if (strcmp(m->op_type, "LSTMGrad")) continue;
    found++;
    CHECK(!strcmp(m->domain, "com.microsoft") && m->n_inputs == 11);
    CHECK(m->inputs[0] == in[0] && m->inputs[1] == in[1] && m->inputs[2] == in[2] && m->inputs[3] < 0);
    CHECK(m->inputs[6] == f->outputs[0] && m->inputs[7] == f->outputs[3] && m->inputs[8] == f->outputs[4]);
    CHECK(m->inputs[9] < 0 && m->inputs[10] >= 0);
    CHECK(m->n_outputs == 4 && m->outputs[0] < 0 && m->outputs[1] >= 0 && m->outputs[2] >= 0 && m->outputs[3] >= 0);
    CHECK(wt_attr_int(m, "hidden_size", 0) == H);
  }
  CHECK(found == 1);
  wt_graph_free(g);
}

int main(void) {
  int failed = 0;
  failed += lstm_case("LSTM forward, B, initial h/c", "forward", 1, 0, 1, 0, "LSTM", NULL);
  failed += lstm_case("LSTM reverse, no B, no initial state", "reverse", 0, 0, 0, 0, "LSTM", NULL);
  failed += lstm_case("LSTM bidirectional, B, initial h/c", "bidirectional", 1, 0, 1, 0, "LSTM", NULL);
  failed += lstm_case("LSTM forward peepholes", "forward", 1, 0, 1, 1, "LSTM", NULL);
  failed += lstm_case("LSTM bidirectional peepholes", "bidirectional", 0, 0, 1, 1, "LSTM", NULL);
  failed += lstm_case("LSTM full-length sequence_lens", "forward", 1, 1, 1, 0, "LSTM", NULL);
  failed += lstm_case("LSTMTraining forward", "forward", 1, 0, 1, 0, "LSTMTraining", "com.microsoft");
  failed += gru_case("GRU forward, B, initial h", "forward", 1, 1, 0, "GRU", NULL);
  failed += gru_case("GRU forward linear_before_reset", "forward", 1, 1, 1, "GRU", NULL);
  failed += gru_case("GRU reverse, no B, no initial h", "reverse", 0, 0, 0, "GRU", NULL);
  failed += gru_case("GRU reverse lbr, no B", "reverse", 0, 1, 1, "GRU", NULL);
  failed += gru_case("GRU bidirectional, B, initial h", "bidirectional", 1, 1, 0, "GRU", NULL);
  failed += gru_case("GRU bidirectional lbr", "bidirectional", 1, 1, 1, "GRU", NULL);
  g_no_hidden_size = 1;
  failed += gru_case("GRU without hidden_size", "forward", 1, 1, 0, "GRU", NULL);
  failed += lstm_case("LSTM without hidden_size", "reverse", 1, 0, 1, 0, "LSTM", NULL);
  g_no_hidden_size = 0;
  failed += gru_case("GRUTraining forward lbr", "forward", 1, 1, 1, "GRUTraining", "com.microsoft");
  structure();
  refused("clip", "clip");
  refused("layout", "layout=1");
  CHECK(failed == 0);
  CHECK_DONE();
}
