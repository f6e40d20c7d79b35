/* The CPU backend's kernel contract. Each op family with definitions in src/ops/ has its CPU
 * kernels in one file here, run_<family>.c, exporting a table wt_cpu_kernels_<family>[] (one
 * entry per op, named by the op's domain and op_type, ending in a zeroed entry) listed in
 * registry.c. The numeric kernels those entries call are the other files of this folder.
 *
 * run: ctx->in / ctx->out carry shapes and data pointers; outputs are preallocated; params are
 *   the bytes the op's infer filled (the family's params struct, ops/<family>.h). Returns WT_OK,
 *   or an error for data-dependent failures (index out of range ...). No allocation.
 * scratch: called at plan time right after the op's infer, with its context (shapes of inputs
 *   and outputs, params filled): the bytes of scratch run needs, 0 when none or when the entry
 *   has no scratch function. How much scratch a kernel needs is the CPU kernel's business (im2col
 *   columns, packed panels, Winograd tiles), so it is asked here, not in the neutral infer; a
 *   kernel whose scratch holds several parts may record their offsets in params (the only
 *   writes allowed to params after infer), which run then reads. */
#ifndef WT_BACKEND_CPU_KERNEL_H
#define WT_BACKEND_CPU_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "ops/op.h"

typedef struct wt_run_ctx {
  const wt_node *node;
  const void *params;
  int n_in;
  const wt_tensor *in;
  int n_out;
  wt_tensor *out;
  void *scratch;                /* the kernel's scratch bytes, 64-byte aligned, contents undefined */
  const wt_exec *exec;          /* the runner's state and settings (ops/exec.h); NULL: none */
} wt_run_ctx;

typedef struct wt_cpu_kernel {
  wt_kernel_key key;            /* the op it runs */
  int (*run)(const wt_run_ctx *ctx);
  size_t (*scratch)(const wt_infer_ctx *ctx); /* NULL: none */
  /* Fusion at plan time: the step's run may take over the step after it, node `next`, which
   * reads only this step's output 0 (its sole reader) and writes one output of the same shape
   * (e.g. a Relu after a GEMM becomes the GEMM's epilogue). Returns 1 after recording that in
   * params (this step's); the planner then skips `next`, whose output shares this one's buffer.
   * `next` may also be a WT_OP_TRANSPOSE swapping the two axes of this step's 2-D output (same
   * bytes, transposed: a GEMM then writes op(A) op(B) transposed). NULL: no fusion. */
  int (*absorb)(void *params, const wt_node *next);
  /* Fusion at plan time: input `input` of this step (of rank `rank` >= 2) is the output of a
   * WT_OP_TRANSPOSE swapping its last two axes. Returns 1 when run can instead read that
   * Transpose's input in its place, as its transpose (a GEMM's trans flag), and with commit set
   * records that in params. The planner asks every reader first (commit 0), and when all can, it
   * commits each and skips the Transpose, whose output then shares its input's bytes. NULL: no. */
  int (*read_swapped)(void *params, int input, int rank, int commit);
  /* Inputs (bit i: input i) the kernel reads as float16 as well as float, converting as it
   * reads (GEMM packing its panels, Gather copying rows): a float16 frozen weight reaches them
   * through a Cast the shape pass skips (WT_OP_WIDEN). float16 at any other input of any op is
   * refused before its infer runs, naming the node, input and dtype. */
  uint32_t half_inputs;
} wt_cpu_kernel;

/* A family's table ends with this entry. */
#define WT_CPU_KERNELS_END {.key = {NULL, NULL}}

/* The CPU kernel of op (NULL when the CPU backend has none: a bug the kernel-table test finds). */
const wt_cpu_kernel *wt_cpu_kernel_find(const wt_op_def *op);
/* The CPU backend, for the planner's backend-neutral questions (wt_plan_missing_kernels). */
extern const wt_backend wt_backend_cpu;

/* True when the node has output i and run got a buffer for it (optional outputs are omitted
 * with an empty name: ops skip their work). */
static inline int wt_output_wanted(const wt_run_ctx *ctx, int i) {
  return i < ctx->n_out && i < ctx->node->n_outputs && ctx->node->outputs[i] >= 0 &&
         ctx->out[i].data != NULL;
}

#endif
