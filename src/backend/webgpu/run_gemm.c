/* The gemm family on the GPU: MatMul and Gemm through gemm.wgsl, one dispatch each; a float16
 * operand (a frozen weight) stays float16 on the GPU, widened as it is read. */
#include "backend/webgpu/kernel.h"
#include "ops/gemm_params.h"

/* Uniform words of gemm.wgsl. */
enum { U_M, U_N, U_K, U_FLAGS, U_ALPHA, U_BETA, U_BIAS_RS, U_BIAS_CS, U_NB, U_A_OFF, U_B_OFF, U_Y_OFF, U_BATCH = 12,
       U_A_STRIDE = 20, U_B_STRIDE = 28 };
enum { F_TA = 1, F_TB = 2, F_BIAS = 4, F_RELU = 8, F_HALF_A = 16, F_HALF_B = 32 };

/* The flags of the float16 operands (frozen weights the plan left float16). */
static uint32_t half_flags(int half) {
  return (half & WT_MM_HALF_A ? F_HALF_A : 0) | (half & WT_MM_HALF_B ? F_HALF_B : 0);
}

static void grid(wt_gpu_dispatch *d, int64_t M, int64_t N, int64_t batches) {
  d->groups[0] = (uint32_t)((N + 63) / 64); /* gemm.wgsl's 64 x 64 tiles */
  d->groups[1] = (uint32_t)((M + 63) / 64);
  d->groups[2] = (uint32_t)batches;
}

static int matmul_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const mm_params *p = c->params;
  (void)cap;
  int r = wt_gpu_check_elems(wt_numel(&c->out[0]), "the output");
  if (r) return r;
  int64_t batches = 1;
  for (int i = 0; i < p->nb; i++) batches *= p->batch[i];
  if (batches > WT_GPU_MAX_GROUPS)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%lld matrices in one MatMul; the webgpu backend runs at most %d",
                     (long long)batches, WT_GPU_MAX_GROUPS);
  *d = (wt_gpu_dispatch){.program = "gemm", .n_bind = 4,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_NONE, WT_GPU_OUT(0)}};
  d->uniform[U_M] = (uint32_t)p->M;
  d->uniform[U_N] = (uint32_t)p->N;
  d->uniform[U_K] = (uint32_t)p->K;
  d->uniform[U_FLAGS] = (p->ta ? F_TA : 0) | (p->tb ? F_TB : 0) | (p->relu ? F_RELU : 0) | half_flags(p->half);
  wt_gpu_f32(&d->uniform[U_ALPHA], 1.0f);
  d->uniform[U_NB] = (uint32_t)p->nb;
  for (int i = 0; i < p->nb; i++) {
    d->uniform[U_BATCH + i] = (uint32_t)p->batch[i];
    d->uniform[U_A_STRIDE + i] = (uint32_t)p->a_stride[i];
    d->uniform[U_B_STRIDE + i] = (uint32_t)p->b_stride[i];
  }
  grid(d, p->M, p->N, batches);
  return 1;
}

static int gemm_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const gemm_params *p = c->params;
  (void)cap;
  if (p->trans_out)
    return WT_GPU_FAIL(WT_ERR_INTERNAL, "a transposed Gemm output is the CPU planner's fusion");
  int r = wt_gpu_check_elems(wt_numel(&c->out[0]), "the output");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "gemm", .n_bind = 4,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), p->has_c ? WT_GPU_IN(2) : WT_GPU_NONE,
                                  WT_GPU_OUT(0)}};
  d->uniform[U_M] = (uint32_t)p->M;
  d->uniform[U_N] = (uint32_t)p->N;
  d->uniform[U_K] = (uint32_t)p->K;
  d->uniform[U_FLAGS] = (p->trans_a ? F_TA : 0) | (p->trans_b ? F_TB : 0) |
                        (p->has_c && p->beta != 0.0f ? F_BIAS : 0) | (p->relu ? F_RELU : 0) | half_flags(p->half);
  wt_gpu_f32(&d->uniform[U_ALPHA], p->alpha);
  wt_gpu_f32(&d->uniform[U_BETA], p->beta);
  d->uniform[U_BIAS_RS] = (uint32_t)p->c_rs;
  d->uniform[U_BIAS_CS] = (uint32_t)p->c_cs;
  grid(d, p->M, p->N, 1);
  return 1;
}

void wt_gpu_gemm_dispatch(wt_gpu_dispatch *d, int8_t a, int64_t a_off, int64_t a_stride, int ta, int8_t b,
                          int64_t b_off, int64_t b_stride, int tb, int8_t y, int64_t y_off, int64_t M, int64_t N,
                          int64_t K, int64_t batches) {
  *d = (wt_gpu_dispatch){.program = "gemm", .n_bind = 4, .bind = {a, b, WT_GPU_NONE, y}};
  d->uniform[U_M] = (uint32_t)M;
  d->uniform[U_N] = (uint32_t)N;
  d->uniform[U_K] = (uint32_t)K;
  d->uniform[U_FLAGS] = (ta ? F_TA : 0) | (tb ? F_TB : 0);
  wt_gpu_f32(&d->uniform[U_ALPHA], 1.0f);
  d->uniform[U_A_OFF] = (uint32_t)a_off;
  d->uniform[U_B_OFF] = (uint32_t)b_off;
  d->uniform[U_Y_OFF] = (uint32_t)y_off;
  d->uniform[U_NB] = 1;
  d->uniform[U_BATCH] = (uint32_t)batches;
  d->uniform[U_A_STRIDE] = (uint32_t)a_stride;
  d->uniform[U_B_STRIDE] = (uint32_t)b_stride;
  grid(d, M, N, batches);
}

const wt_gpu_kernel wt_gpu_kernels_gemm[] = {
    {.key = {"", "MatMul"}, .encode = matmul_encode},
    {.key = {"", "Gemm"}, .encode = gemm_encode},
    {.key = {0}},
};
