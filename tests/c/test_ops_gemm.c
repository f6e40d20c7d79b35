/* Op family gemm through op_harness: MatMul (1-D promotion, broadcast batches, folded batches)
 * and Gemm (transposes, alpha/beta, every C broadcast form, optional C), plus bad inputs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static void fill(float *p, int n, float scale) {
  for (int i = 0; i < n; i++) p[i] = scale * (float)((i * 7 + 3) % 11 - 5);
}

/* Runs a 2-input (or 3-input) node; returns rc and leaves out[0] for the caller to free. */
static int run_node(const char *op, int opset, int n_in, const wt_tensor *in, wt_tensor *out,
                    int ta, int tb, float alpha, float beta) {
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, op, "", n_in, 1);
  if (ta >= 0) wt_node_set_int(g, node, "transA", ta);
  if (tb >= 0) wt_node_set_int(g, node, "transB", tb);
  if (alpha == alpha) wt_node_set_float(g, node, "alpha", alpha);
  if (beta == beta) wt_node_set_float(g, node, "beta", beta);
  int rc = harness_run(g, node, opset, n_in, in, 1, out);
  wt_graph_free(g);
  return rc;
}

static int run_matmul(int ra, const int64_t *da, float *a, int rb, const int64_t *db, float *b,
                      wt_tensor *out) {
  wt_tensor in[2] = {harness_f32(ra, da, a), harness_f32(rb, db, b)};
  return run_node("MatMul", 13, 2, in, out, -1, -1, NAN, NAN);
}

static void check_vals(const wt_tensor *t, const float *want, int n) {
  const float *y = t->data;
  for (int i = 0; i < n; i++) CHECK_NEAR(y[i], want[i], 1e-5 + 1e-5 * fabs(want[i]));
}

static void test_matmul_basic(void) {
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  wt_tensor out[1];
  /* [2,3] x [3,2] */
  int64_t da[2] = {2, 3}, db[2] = {3, 2};
  CHECK_OK(run_matmul(2, da, a, 2, db, b, out));
  CHECK(out[0].rank == 2 && out[0].dims[0] == 2 && out[0].dims[1] == 2);
  float w1[4] = {58, 64, 139, 154};
  check_vals(&out[0], w1, 4);
  harness_free(1, out);
  /* [3] x [3,2] -> [2] */
  int64_t d3[1] = {3};
  CHECK_OK(run_matmul(1, d3, a, 2, db, b, out));
  CHECK(out[0].rank == 1 && out[0].dims[0] == 2);
  float w2[2] = {58, 64};
  check_vals(&out[0], w2, 2);
  harness_free(1, out);
  /* [2,3] x [3] -> [2] */
  CHECK_OK(run_matmul(2, da, a, 1, d3, b, out));
  CHECK(out[0].rank == 1 && out[0].dims[0] == 2);
  float w3[2] = {1 * 7 + 2 * 8 + 3 * 9, 4 * 7 + 5 * 8 + 6 * 9};
  check_vals(&out[0], w3, 2);
  harness_free(1, out);
  /* [3] x [3] -> scalar */
  CHECK_OK(run_matmul(1, d3, a, 1, d3, b, out));
  CHECK(out[0].rank == 0);
  float w4[1] = {50};
  check_vals(&out[0], w4, 1);
  harness_free(1, out);
  /* [1,3] x [3] x batch: [2,1,3] x [3] -> [2,1] */
  int64_t d213[3] = {2, 1, 3};
  CHECK_OK(run_matmul(3, d213, a, 1, d3, b, out));
  CHECK(out[0].rank == 2 && out[0].dims[0] == 2 && out[0].dims[1] == 1);
  harness_free(1, out);
}

/* Naive batched reference for A [ba0?, ba1, M, K] x B [bb1, K, N] style shapes given strides. */
static void test_matmul_batched(void) {
  enum { M = 5, K = 7, N = 6 };
  /* A [2,1,M,K] x B [3,K,N] -> [2,3,M,N]: A broadcast over dim 1, B over dim 0. */
  float a[2 * M * K], b[3 * K * N], want[2 * 3 * M * N];
  fill(a, 2 * M * K, 0.25f);
  fill(b, 3 * K * N, 0.5f);
  for (int i0 = 0; i0 < 2; i0++)
    for (int i1 = 0; i1 < 3; i1++)
      for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
          float s = 0;
          for (int k = 0; k < K; k++) s += a[(i0 * M + m) * K + k] * b[(i1 * K + k) * N + n];
          want[((i0 * 3 + i1) * M + m) * N + n] = s;
        }
  int64_t da[4] = {2, 1, M, K}, db[3] = {3, K, N};
  wt_tensor out[1];
  CHECK_OK(run_matmul(4, da, a, 3, db, b, out));
  CHECK(out[0].rank == 4 && out[0].dims[0] == 2 && out[0].dims[1] == 3 && out[0].dims[2] == M &&
        out[0].dims[3] == N);
  check_vals(&out[0], want, 2 * 3 * M * N);
  harness_free(1, out);

  /* Folded: A [3,M,K] x B [K,N] is one [3M,K] x [K,N] product. */
  float a3[3 * M * K], want3[3 * M * N];
  fill(a3, 3 * M * K, 0.125f);
  for (int r = 0; r < 3 * M; r++)
    for (int n = 0; n < N; n++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += a3[r * K + k] * b[k * N + n];
      want3[r * N + n] = s;
    }
  int64_t da3[3] = {3, M, K}, db2[2] = {K, N};
  CHECK_OK(run_matmul(3, da3, a3, 2, db2, b, out));
  CHECK(out[0].rank == 3 && out[0].dims[0] == 3);
  check_vals(&out[0], want3, 3 * M * N);
  harness_free(1, out);

  /* A broadcast against batched B: [M,K] x [3,K,N] -> [3,M,N]. */
  float want4[3 * M * N];
  for (int t = 0; t < 3; t++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        float s = 0;
        for (int k = 0; k < K; k++) s += a[m * K + k] * b[(t * K + k) * N + n];
        want4[(t * M + m) * N + n] = s;
      }
  int64_t dmk[2] = {M, K};
  CHECK_OK(run_matmul(2, dmk, a, 3, db, b, out));
  CHECK(out[0].rank == 3 && out[0].dims[0] == 3 && out[0].dims[1] == M);
  check_vals(&out[0], want4, 3 * M * N);
  harness_free(1, out);

  /* K = 0: zeros. */
  int64_t dz1[2] = {2, 0}, dz2[2] = {0, 3};
  CHECK_OK(run_matmul(2, dz1, NULL, 2, dz2, NULL, out));
  CHECK(out[0].dims[0] == 2 && out[0].dims[1] == 3);
  float zeros[6] = {0};
  check_vals(&out[0], zeros, 6);
  harness_free(1, out);
}

static void test_matmul_bad(void) {
  float a[6] = {0}, b[6] = {0};
  wt_tensor out[1];
  int64_t da[2] = {2, 3}, db[2] = {2, 3};
  CHECK(run_matmul(2, da, a, 2, db, b, out) == WT_ERR_SHAPE); /* inner 3 vs 2 */
  harness_free(1, out);
  int64_t ba[3] = {2, 1, 3}, bb[3] = {3, 3, 1};
  CHECK(run_matmul(3, ba, a, 3, bb, b, out) == WT_ERR_SHAPE); /* batch 2 vs 3 */
  harness_free(1, out);
  int64_t ia[2] = {1, 1}, ib[2] = {1, 1}, iv[1] = {1};
  wt_tensor in[2] = {harness_i64(2, ia, (int64_t *)iv), harness_i64(2, ib, (int64_t *)iv)};
  CHECK(run_node("MatMul", 13, 2, in, out, -1, -1, NAN, NAN) == WT_ERR_SHAPE);
  CHECK(strstr(wt_error_message(), "float") != NULL);
  harness_free(1, out);
}

/* Gemm against a naive loop for one C shape. */
static void gemm_case(int ta, int tb, float alpha, float beta, int c_rank, const int64_t *c_dims,
                      int opset) {
  enum { M = 6, K = 9, N = 5 };
  float a[M * K], b[K * N], c[M * N], want[M * N];
  fill(a, M * K, 0.5f);
  fill(b, K * N, 0.25f);
  fill(c, M * N, 1.0f);
  int64_t da[2] = {ta ? K : M, ta ? M : K}, db[2] = {tb ? N : K, tb ? K : N};
  int64_t cm = c_rank >= 2 ? c_dims[0] : 1, cn = c_rank >= 1 ? c_dims[c_rank - 1] : 1;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      float s = 0;
      for (int k = 0; k < K; k++)
        s += (ta ? a[k * M + m] : a[m * K + k]) * (tb ? b[n * K + k] : b[k * N + n]);
      float cv = c_rank < 0 ? 0.0f : c[(cm == 1 ? 0 : m) * cn + (cn == 1 ? 0 : n)];
      want[m * N + n] = alpha * s + beta * cv;
    }
  wt_tensor in[3] = {harness_f32(2, da, a), harness_f32(2, db, b)};
  int n_in = 2;
  if (c_rank >= 0) in[n_in++] = harness_f32(c_rank, c_dims, c);
  wt_tensor out[1];
  CHECK_OK(run_node("Gemm", opset, n_in, in, out, ta, tb, alpha, beta));
  CHECK(out[0].rank == 2 && out[0].dims[0] == M && out[0].dims[1] == N);
  check_vals(&out[0], want, M * N);
  harness_free(1, out);
}

static void test_gemm(void) {
  int64_t full[2] = {6, 5}, row[1] = {5}, col[2] = {6, 1}, one[1] = {1}, one2[2] = {1, 5};
  for (int t = 0; t < 4; t++) {
    gemm_case(t & 1, t >> 1, 1.0f, 1.0f, 2, full, 13);
    gemm_case(t & 1, t >> 1, 0.5f, -2.0f, 1, row, 13);
    gemm_case(t & 1, t >> 1, 2.0f, 0.75f, 2, col, 11);
    gemm_case(t & 1, t >> 1, 1.0f, 3.0f, 0, NULL, 9);
    gemm_case(t & 1, t >> 1, 1.0f, 1.0f, 1, one, 7);
    gemm_case(t & 1, t >> 1, -1.0f, 0.5f, 2, one2, 13);
    gemm_case(t & 1, t >> 1, 1.5f, 0.0f, 2, full, 13); /* beta 0: C ignored */
    gemm_case(t & 1, t >> 1, 1.0f, 1.0f, -1, NULL, 13); /* no C */
  }
  /* Hand-checked: [[1,2],[3,4]] * [[5,6],[7,8]] + [1, -1]. */
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[2] = {1, -1};
  int64_t d22[2] = {2, 2}, d2[1] = {2};
  wt_tensor in[3] = {harness_f32(2, d22, a), harness_f32(2, d22, b), harness_f32(1, d2, c)};
  wt_tensor out[1];
  CHECK_OK(run_node("Gemm", 13, 3, in, out, -1, -1, NAN, NAN));
  float want[4] = {20, 21, 44, 49};
  check_vals(&out[0], want, 4);
  harness_free(1, out);
}

static void test_gemm_bad(void) {
  float a[12] = {0};
  wt_tensor out[1];
  int64_t d23[2] = {2, 3}, d33[2] = {3, 3}, d3[1] = {3}, d4[1] = {4}, d233[3] = {2, 3, 3};
  /* inner mismatch: [2,3] x [2,3] */
  wt_tensor in1[2] = {harness_f32(2, d23, a), harness_f32(2, d23, a)};
  CHECK(run_node("Gemm", 13, 2, in1, out, -1, -1, NAN, NAN) == WT_ERR_SHAPE);
  /* C [4] does not broadcast to [2,3] */
  wt_tensor in2[3] = {harness_f32(2, d23, a), harness_f32(2, d33, a), harness_f32(1, d4, a)};
  CHECK(run_node("Gemm", 13, 3, in2, out, -1, -1, NAN, NAN) == WT_ERR_SHAPE);
  CHECK(strstr(wt_error_message(), "'C'") != NULL);
  /* C missing before opset 11 */
  CHECK(run_node("Gemm", 9, 2, in2, out, -1, -1, NAN, NAN) != WT_OK);
  /* rank 3 A */
  wt_tensor in3[3] = {harness_f32(3, d233, a), harness_f32(2, d33, a), harness_f32(1, d3, a)};
  CHECK(run_node("Gemm", 13, 3, in3, out, -1, -1, NAN, NAN) == WT_ERR_SHAPE);
  /* int64 A */
  int64_t iv[6] = {0};
  wt_tensor in4[2] = {harness_i64(2, d23, iv), harness_f32(2, d33, a)};
  CHECK(run_node("Gemm", 13, 2, in4, out, -1, -1, NAN, NAN) == WT_ERR_SHAPE);
}

int main(void) {
  test_matmul_basic();
  test_matmul_batched();
  test_matmul_bad();
  test_gemm();
  test_gemm_bad();
  CHECK_DONE();
}
