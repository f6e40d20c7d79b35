/* Einsum: forward checked against a brute-force evaluator (GEMM path layouts: plain, transposed,
 * copied operands, permuted output; generic path: diagonal, broadcast, 3 operands, int64),
 * rejected inputs, and finite-difference checks of the gradient rule over the contractions
 * transformers use plus ellipsis, size-1 broadcast and operand-only summed subscripts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"

static const char *g_eq;
static void set_eq(wt_graph *g, int node) { wt_node_set_string(g, node, "equation", g_eq); }

static int g_failed;
static void gcl(const char *label, const char *eq, int n_in, const gc_arg *args) {
  gc_opts o = {.opset = 13};
  g_eq = eq;
  g_failed += gradcheck(label, "Einsum", &o, n_in, args, set_eq);
}
static void gc(const char *eq, int n_in, const gc_arg *args) { gcl(eq, eq, n_in, args); }

/* Brute force over every letter assignment (explicit equations, letters only). */
static void reference(const char *eq, int n, const float *const *ops, const int64_t (*dims)[8],
                      const int *ranks, float *y, int64_t y_numel) {
  int64_t size[128] = {0};
  char terms[8][16], out[16];
  const char *p = eq;
  for (int k = 0; k < n; k++) {
    int len = 0;
    while (*p != ',' && *p != '-') terms[k][len++] = *p++;
    terms[k][len] = 0;
    p++;
    for (int i = 0; i < len; i++) size[(int)terms[k][i]] = dims[k][i];
    (void)ranks;
  }
  p++; /* '>' */
  strcpy(out, p);
  char letters[32];
  int nl = 0;
  for (int c = 0; c < 128; c++)
    if (size[c]) letters[nl++] = (char)c;
  memset(y, 0, sizeof(float) * (size_t)y_numel);
  int64_t idx[128] = {0};
  for (;;) {
    double prod = 1;
    for (int k = 0; k < n; k++) {
      int64_t off = 0;
      for (int i = 0; terms[k][i]; i++) off = off * dims[k][i] + idx[(int)terms[k][i]];
      prod *= ops[k][off];
    }
    int64_t o = 0;
    for (int i = 0; out[i]; i++) o = o * size[(int)out[i]] + idx[(int)out[i]];
    y[o] += (float)prod;
    int l = nl - 1;
    for (; l >= 0; l--) {
      if (++idx[(int)letters[l]] < size[(int)letters[l]]) break;
      idx[(int)letters[l]] = 0;
    }
    if (l < 0) break;
  }
}

static void forward_case(const char *eq, int n, const int64_t (*dims)[8], const int *ranks) {
  float *data[4];
  wt_tensor in[4], out[1];
  unsigned s = 7;
  for (int k = 0; k < n; k++) {
    int64_t cnt = 1;
    for (int i = 0; i < ranks[k]; i++) cnt *= dims[k][i];
    data[k] = malloc(sizeof(float) * (size_t)cnt);
    for (int64_t i = 0; i < cnt; i++) {
      s = s * 1103515245u + 12345u;
      data[k][i] = (float)((s >> 16) % 200) / 100.0f - 1.0f;
    }
    in[k] = harness_f32(ranks[k], dims[k], data[k]);
  }
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Einsum", "", n, 1);
  wt_node_set_string(g, node, "equation", eq);
  int rc = harness_run(g, node, 12, n, in, 1, out);
  CHECK_OK(rc);
  if (!rc) {
    int64_t numel = wt_numel(&out[0]);
    float *ref = malloc(sizeof(float) * (size_t)(numel ? numel : 1));
    reference(eq, n, (const float *const *)data, dims, ranks, ref, numel);
    int bad = 0;
    for (int64_t i = 0; i < numel; i++)
      if (fabsf(ref[i] - ((float *)out[0].data)[i]) > 1e-4f + 1e-4f * fabsf(ref[i])) bad++;
    if (bad) fprintf(stderr, "einsum %s: %d mismatches\n", eq, bad);
    CHECK(bad == 0);
    free(ref);
  }
  harness_free(1, out);
  wt_graph_free(g);
  for (int k = 0; k < n; k++) free(data[k]);
}

static void forward_checks(void) {
  static const struct {
    const char *eq;
    int n, ranks[3];
    int64_t dims[3][8];
  } cases[] = {
      {"bij,bjk->bik", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
      {"bhqd,bhkd->bhqk", 2, {4, 4}, {{2, 2, 3, 4}, {2, 2, 5, 4}}},
      {"bhqk,bhkd->bhqd", 2, {4, 4}, {{2, 2, 3, 5}, {2, 2, 5, 4}}},
      {"ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
      {"ji,jk->ik", 2, {2, 2}, {{4, 3}, {4, 5}}},
      {"ij,jk->ki", 2, {2, 2}, {{3, 4}, {4, 5}}},
      {"bqhd,bkhd->bhqk", 2, {4, 4}, {{2, 3, 2, 4}, {2, 5, 2, 4}}},
      {"i,j->ij", 2, {1, 1}, {{3}, {4}}},
      {"i,i->", 2, {1, 1}, {{5}, {5}}},
      {"ij,jk->k", 2, {2, 2}, {{3, 4}, {4, 5}}},
      {"ij->ji", 1, {2}, {{3, 4}}},
      {"ij->i", 1, {2}, {{3, 4}}},
      {"ii->i", 1, {2}, {{3, 3}}},
      {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    forward_case(cases[c].eq, cases[c].n, (const int64_t(*)[8])cases[c].dims, cases[c].ranks);
}

static void forward_special(void) {
  /* Implicit output with ellipsis and broadcasting: "...ij,...jk" on [2,1,2,3] x [4,3,2]. */
  int64_t ad[4] = {2, 1, 2, 3}, bd[3] = {4, 3, 2};
  float a[12], b[24];
  for (int i = 0; i < 12; i++) a[i] = (float)i * 0.5f - 2;
  for (int i = 0; i < 24; i++) b[i] = 1.0f - (float)i * 0.25f;
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Einsum", "", 2, 1);
  wt_node_set_string(g, node, "equation", "...ij,...jk");
  wt_tensor in[2] = {harness_f32(4, ad, a), harness_f32(3, bd, b)}, out[1];
  CHECK_OK(harness_run(g, node, 12, 2, in, 1, out));
  CHECK(out[0].rank == 4 && out[0].dims[0] == 2 && out[0].dims[1] == 4 && out[0].dims[2] == 2 &&
        out[0].dims[3] == 2);
  const float *y = out[0].data;
  for (int p = 0; y && p < 2; p++)
    for (int q = 0; q < 4; q++)
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
          float e = 0;
          for (int j = 0; j < 3; j++) e += a[p * 6 + i * 3 + j] * b[q * 6 + j * 2 + k];
          CHECK_NEAR(y[((p * 4 + q) * 2 + i) * 2 + k], e, 1e-5);
        }
  harness_free(1, out);
  wt_graph_free(g);
  /* int64 contraction. */
  int64_t d2[2] = {2, 2}, x[4] = {1, 2, 3, 4}, w[4] = {5, 6, 7, 8}, e[4] = {19, 22, 43, 50};
  g = wt_graph_new();
  node = harness_node(g, "Einsum", "", 2, 1);
  wt_node_set_string(g, node, "equation", "ij,jk->ik");
  wt_tensor ii[2] = {harness_i64(2, d2, x), harness_i64(2, d2, w)};
  CHECK_OK(harness_run(g, node, 12, 2, ii, 1, out));
  for (int i = 0; out[0].data && i < 4; i++) CHECK(((int64_t *)out[0].data)[i] == e[i]);
  harness_free(1, out);
  /* Rejected: operand count, rank, mismatched sizes. */
  wt_tensor one[1] = {harness_i64(2, d2, x)};
  CHECK(harness_run(g, node, 12, 1, one, 1, out) != WT_OK);
  wt_node_set_string(g, node, "equation", "ijk,jk->ik");
  CHECK(harness_run(g, node, 12, 2, ii, 1, out) != WT_OK);
  int64_t d3[2] = {3, 1};
  wt_tensor mm[2] = {harness_i64(2, d2, x), harness_i64(2, d3, w)};
  wt_node_set_string(g, node, "equation", "ij,kj->ik");
  mm[1].dims[0] = 1, mm[1].dims[1] = 3;
  CHECK(harness_run(g, node, 12, 2, mm, 1, out) != WT_OK);
  wt_graph_free(g);
}

static void grad_checks(void) {
  gc_arg a3[2] = {{.rank = 3, .dims = {2, 3, 4}}, {.rank = 3, .dims = {2, 4, 5}}};
  gc("bij,bjk->bik", 2, a3);
  gc_arg qk[2] = {{.rank = 4, .dims = {2, 2, 3, 4}}, {.rank = 4, .dims = {2, 2, 5, 4}}};
  gc("bhqd,bhkd->bhqk", 2, qk);
  gc_arg pv[2] = {{.rank = 4, .dims = {2, 2, 3, 5}}, {.rank = 4, .dims = {2, 2, 5, 4}}};
  gc("bhqk,bhkd->bhqd", 2, pv);
  gc_arg mm[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {4, 5}}};
  gc("ij,jk->ik", 2, mm);
  gc("ij,jk", 2, mm);
  gc("ij,jk->ki", 2, mm);
  gc("ij,jk->k", 2, mm);
  gc_arg one[1] = {{.rank = 2, .dims = {3, 4}}};
  gc("ij->ji", 1, one);
  gc("ij->i", 1, one);
  gc("ij->", 1, one);
  gc_arg outer[2] = {{.rank = 1, .dims = {3}}, {.rank = 1, .dims = {4}}};
  gc("i,j->ij", 2, outer);
  gc_arg three[3] = {{.rank = 2, .dims = {2, 3}}, {.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {4, 2}}};
  gc("ij,jk,kl->il", 3, three);
  gc_arg ell[2] = {{.rank = 4, .dims = {2, 1, 2, 3}}, {.rank = 3, .dims = {4, 3, 2}}};
  gc("...ij,...jk->...ik", 2, ell);
  gc_arg bc[2] = {{.rank = 3, .dims = {1, 2, 3}}, {.rank = 3, .dims = {4, 3, 2}}};
  gcl("bij,bjk->bik (size-1 broadcast)", "bij,bjk->bik", 2, bc);
}

int main(void) {
  forward_checks();
  forward_special();
  grad_checks();
  CHECK(g_failed == 0);
  CHECK_DONE();
}
