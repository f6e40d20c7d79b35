/* The WebGPU backend: the kernel tables of the families it runs (a subset of ops/families.h so
 * far; wt_plan_missing_kernels names the ops it lacks), looked up by op. */
#include "backend/webgpu/kernel.h"

#define GPU_FAMILIES(X) \
  X(binary) X(conv) X(data) X(data_index) X(gemm) X(norm) X(norm_grad) X(pool) X(reduce) X(resize) \
  X(rnn) X(shape) X(shape_build) X(softmax) X(softmax_grad) X(training) X(unary) X(unary_grad)

#define DECLARE(f) extern const wt_gpu_kernel wt_gpu_kernels_##f[];
GPU_FAMILIES(DECLARE)
#undef DECLARE

static const void *const g_tables[] = {
#define LIST(f) wt_gpu_kernels_##f,
    GPU_FAMILIES(LIST)
#undef LIST
};

static const wt_kernel_tables g_kernels = {
    .tables = g_tables, .n_tables = (int)(sizeof g_tables / sizeof g_tables[0]),
    .stride = sizeof(wt_gpu_kernel)};

const wt_gpu_kernel *wt_gpu_kernel_find(const wt_op_def *op) {
  return wt_kernel_tables_find(&g_kernels, op->domain, op->op_type);
}

static const void *kernel(const wt_op_def *op) { return wt_gpu_kernel_find(op); }

static void each(void (*fn)(const wt_kernel_key *key, void *user), void *user) {
  wt_kernel_tables_each(&g_kernels, fn, user);
}

/* No optimizer table yet: the training graph runs, the optimizer step does not. */
const wt_backend wt_backend_webgpu = {.name = "webgpu", .kernel = kernel, .each = each};
