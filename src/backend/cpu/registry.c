/* The CPU backend: every op family's kernel table (run_<family>.c; the families: ops/families.h),
 * looked up by op. */
#include "backend/cpu/kernel.h"
#include "backend/cpu/optim.h"
#include "ops/families.h"

#define DECLARE(f) extern const wt_cpu_kernel wt_cpu_kernels_##f[];
WT_OP_FAMILIES(DECLARE)
#undef DECLARE

static const void *const g_tables[] = {
#define LIST(f) wt_cpu_kernels_##f,
    WT_OP_FAMILIES(LIST)
#undef LIST
};

static const wt_kernel_tables g_kernels = {
    .tables = g_tables, .n_tables = (int)(sizeof g_tables / sizeof g_tables[0]),
    .stride = sizeof(wt_cpu_kernel)};

const wt_cpu_kernel *wt_cpu_kernel_find(const wt_op_def *op) {
  return wt_kernel_tables_find(&g_kernels, op->domain, op->op_type);
}

static const void *kernel(const wt_op_def *op) { return wt_cpu_kernel_find(op); }

static void each(void (*fn)(const wt_kernel_key *key, void *user), void *user) {
  wt_kernel_tables_each(&g_kernels, fn, user);
}

const wt_backend wt_backend_cpu = {
    .name = "cpu", .kernel = kernel, .each = each, .optim = &wt_backend_optim_cpu};
