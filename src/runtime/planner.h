/* The planner: a graph and concrete inputs -> a plan: per-node kernels with parsed parameters,
 * every value's shape, arena offsets with buffers of dead values reused, constants folded
 * (shapes and folding: the shape pass, shape/shape.h; the planner's parts: plan_internal.h).
 * Running a plan allocates nothing. A plan is valid for the input shapes (and the values of
 * the few integer inputs that determine shapes) it was built for: wt_plan_matches tells. */
#ifndef WT_RUNTIME_PLANNER_H
#define WT_RUNTIME_PLANNER_H

#include "backend/backend.h"
#include "ir/ir.h"
#include "ops/op.h"

typedef struct wt_plan wt_plan;

/* The ops of g that backend b has no kernel for, each once, in the order of the first node using
 * it: the first `cap` of them in missing[] (NULL with cap 0 to count only). Returns how many
 * there are. Ops webtrain does not define at all are not counted (wt_graph_check_ops names those). */
int wt_plan_missing_kernels(const wt_graph *g, const wt_backend *b, const wt_op_def **missing,
                            int cap);
/* WT_OK when backend b has a kernel for every op of g; otherwise WT_ERR_UNSUPPORTED naming the
 * backend and every op it lacks, with a node using each. */
int wt_plan_check_kernels(const wt_graph *g, const wt_backend *b);

/* inputs[k] describes graph input k (dtype, shape, data). exec: what the plan's steps see of
 * their runner (ops/exec.h), kept by the plan for its runs (it must outlive the plan); NULL:
 * nothing prepacked, default settings. */
int wt_plan_build(const wt_graph *g, const wt_tensor *inputs, const wt_exec *exec, wt_plan **out);
void wt_plan_free(wt_plan *p);
/* Fills *out with value v's dtype, shape and (after a run, when the run reads it) data; 0 when
 * the plan has no such value. */
int wt_plan_value(const wt_plan *p, int v, wt_tensor *out);
/* True when the plan was built for inputs of these dtypes/shapes (and shape-determining values). */
int wt_plan_matches(const wt_plan *p, const wt_tensor *inputs);
/* Binds the arena the plan's activations and scratch live in: at least wt_plan_arena_bytes
 * (+64 bytes of slack), 64-byte aligned, owned by the caller (a session shares one among its
 * plans; a module's training and eval sessions share theirs). O(1): values keep offsets. */
void wt_plan_bind_arena(wt_plan *p, void *arena);
/* Runs the plan on inputs (its arena bound); graph outputs are then readable with
 * wt_plan_output until the next run of any plan using the same arena. */
int wt_plan_run(wt_plan *p, const wt_tensor *inputs);
/* Graph output k: its dtype and shape (valid as long as the plan) and, in *data, its bytes. */
const wt_tensor *wt_plan_output(const wt_plan *p, int k, void **data);
/* Steps the plan does not run: absorbed by the step before them (a Relu as a GEMM's epilogue, a
 * Transpose of a Gemm's output) or read in place by their readers (a Transpose a GEMM reads
 * through its trans flag). */
int wt_plan_fused_count(const wt_plan *p);
/* Tests: with on == 0, plans built afterwards fuse nothing (every step runs as its op alone),
 * so a fused plan can be compared with the plain one. On by default; not thread-safe. */
void wt_plan_set_fusion(int on);
/* Bytes of the plan's arena (activations and scratch), for memory reports. */
size_t wt_plan_arena_bytes(const wt_plan *p);
/* The most arena bytes live at one time (values + scratch): what a perfect layout would need. */
size_t wt_plan_live_peak_bytes(const wt_plan *p);

#endif
