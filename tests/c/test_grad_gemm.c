/* Finite-difference checks of the MatMul and Gemm gradient rules: 2-D, batched, broadcast
 * batch dims, 1-D promotion, N-D x 2-D weights, every transA/transB case, alpha/beta, C shapes. */
#include "check.h"
#include "gradcheck.h"

#define A(r, ...) {.rank = r, .dims = {__VA_ARGS__}}

static int mm(const char *label, gc_arg a, gc_arg b, int opset) {
  gc_arg args[2] = {a, b};
  gc_opts o = {.opset = opset};
  return gradcheck(label, "MatMul", &o, 2, args, NULL);
}

static int g_ta, g_tb;
static float g_alpha, g_beta;
static void gemm_attrs(wt_graph *g, int node) {
  if (g_ta) wt_node_set_int(g, node, "transA", 1);
  if (g_tb) wt_node_set_int(g, node, "transB", 1);
  if (g_alpha != 1.0f) wt_node_set_float(g, node, "alpha", g_alpha);
  if (g_beta != 1.0f) wt_node_set_float(g, node, "beta", g_beta);
}

int main(void) {
  int failed = 0;
  failed += mm("MatMul 2-D", (gc_arg)A(2, 3, 4), (gc_arg)A(2, 4, 5), 17);
  failed += mm("MatMul 2-D opset 9", (gc_arg)A(2, 3, 4), (gc_arg)A(2, 4, 2), 9);
  failed += mm("MatMul 3-D x 2-D weight", (gc_arg)A(3, 2, 3, 4), (gc_arg)A(2, 4, 5), 17);
  failed += mm("MatMul 4-D x 2-D weight opset 9", (gc_arg)A(4, 2, 1, 3, 4), (gc_arg)A(2, 4, 2), 9);
  failed += mm("MatMul 4-D x 4-D", (gc_arg)A(4, 2, 2, 3, 4), (gc_arg)A(4, 2, 2, 4, 3), 17);
  failed += mm("MatMul broadcast batch", (gc_arg)A(4, 2, 1, 3, 4), (gc_arg)A(3, 3, 4, 2), 17);
  failed += mm("MatMul 2-D x 3-D", (gc_arg)A(2, 3, 4), (gc_arg)A(3, 2, 4, 5), 17);
  failed += mm("MatMul 1-D x 2-D", (gc_arg)A(1, 4), (gc_arg)A(2, 4, 3), 17);
  failed += mm("MatMul 2-D x 1-D", (gc_arg)A(2, 3, 4), (gc_arg)A(1, 4), 17);
  failed += mm("MatMul 1-D x 1-D", (gc_arg)A(1, 4), (gc_arg)A(1, 4), 17);
  failed += mm("MatMul 1-D x 3-D", (gc_arg)A(1, 4), (gc_arg)A(3, 2, 4, 3), 17);
  failed += mm("MatMul 3-D x 1-D opset 11", (gc_arg)A(3, 2, 3, 4), (gc_arg)A(1, 4), 11);
  {
    gc_arg args[2] = {A(3, 2, 3, 4), {.rank = 2, .dims = {4, 5}, .constant = 1}};
    failed += gradcheck("MatMul constant weight", "MatMul", NULL, 2, args, NULL);
  }

  const struct { int m, k, n; } sz = {3, 4, 5};
  for (int t = 0; t < 4; t++) {
    g_ta = t & 1;
    g_tb = t >> 1;
    g_alpha = t == 3 ? 0.5f : 1.0f;
    g_beta = t == 2 ? 2.0f : 1.0f;
    gc_arg a = g_ta ? (gc_arg)A(2, sz.k, sz.m) : (gc_arg)A(2, sz.m, sz.k);
    gc_arg b = g_tb ? (gc_arg)A(2, sz.n, sz.k) : (gc_arg)A(2, sz.k, sz.n);
    gc_arg cs[5] = {A(1, sz.n), A(2, sz.m, 1), A(0, 0), A(2, sz.m, sz.n), {.absent = 1}};
    const char *cn[5] = {"C [N]", "C [M,1]", "C scalar", "C [M,N]", "no C"};
    for (int k = 0; k < 5; k++) {
      char label[96];
      snprintf(label, sizeof label, "Gemm transA=%d transB=%d alpha=%g beta=%g %s", g_ta, g_tb,
               g_alpha, g_beta, cn[k]);
      gc_arg args[3] = {a, b, cs[k]};
      failed += gradcheck(label, "Gemm", NULL, cs[k].absent ? 2 : 3, args, gemm_attrs);
    }
  }
  g_ta = 1;
  g_tb = 0;
  g_alpha = 2.0f;
  g_beta = 0.5f;
  {
    gc_arg args[3] = {A(2, 4, 3), A(2, 4, 2), A(1, 2)};
    gc_opts o = {.opset = 9};
    failed += gradcheck("Gemm opset 9", "Gemm", &o, 3, args, gemm_attrs);
  }
  CHECK(failed == 0);
  CHECK_DONE();
}
