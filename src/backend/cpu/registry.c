/* The CPU backend: every op family's kernel table (run_<family>.c; the families: ops/families.h),
 * looked up by op. */
#include "backend/cpu/kernel.h"
#include "ops/families.h"

#define DECLARE(f) extern const wt_cpu_kernel wt_cpu_kernels_##f[];
WT_OP_FAMILIES(DECLARE)
#undef DECLARE

static const void *const g_tables[] = {
#define LIST(f) wt_cpu_kernels_##f,
    WT_OP_FAMILIES(LIST)
#undef LIST
};

#define WT_MAX_KERNELS 512
static const wt_kernel_key *g_sorted[WT_MAX_KERNELS];
static wt_kernel_index g_index = {.tables = g_tables,
                                  .n_tables = (int)(sizeof g_tables / sizeof g_tables[0]),
                                  .stride = sizeof(wt_cpu_kernel), .sorted = g_sorted,
                                  .cap = WT_MAX_KERNELS, .count = -1};

const wt_cpu_kernel *wt_cpu_kernel_find(const wt_op_def *op) {
  return wt_kernel_index_find(&g_index, op->domain, op->op_type);
}

static const void *kernel(const wt_op_def *op) { return wt_cpu_kernel_find(op); }

static void each(void (*fn)(const wt_kernel_key *key, void *user), void *user) {
  wt_kernel_index_each(&g_index, fn, user);
}

const wt_backend wt_backend_cpu = {.name = "cpu", .kernel = kernel, .each = each};
