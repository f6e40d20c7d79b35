/* The shape pass: a graph and concrete inputs -> every value's dtype and shape, the constants
 * folded (run now: Constant nodes, Shape/Size of known shapes, any node whose inputs are all
 * known), and the steps left to run, each with its op, parsed params and scratch size. Each
 * op's own infer is the only definition of its shapes; the planner (runtime/) lays out and runs
 * what the pass leaves, wt_graph_infer_shapes (below; artifacts/ uses it) writes it into the
 * IR's declared shapes. Nothing here runs a model or knows about memory layout. */
#ifndef WT_SHAPE_SHAPE_H
#define WT_SHAPE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cpu/kernel.h"
#include "ir/ir.h"
#include "ops/op.h"

/* Upper bound on any value's element count (far beyond a wasm heap; checked before products
 * can overflow). */
#define WT_MAX_ELEMS ((int64_t)1 << 40)
/* The bound while inferring with stand-ins for symbolic dims (wt_shape_pass.stand_ins): a
 * [batch, heads, seq, seq] value of stand-ins is ~1e10 elements per head; still far from int64
 * overflow with any element size. */
#define WT_MAX_ELEMS_STAND_IN ((int64_t)1 << 52)

/* Where a value's bytes come from (one byte per value, wt_shape_pass.storage). */
enum wt_storage {
  WT_ST_NONE,   /* not produced */
  WT_ST_INPUT,  /* a graph input: the caller's buffer */
  WT_ST_INIT,   /* an initializer: the graph's bytes */
  WT_ST_STATIC, /* a folded constant: computed by the pass, owned by it (statics) */
  WT_ST_ARENA,  /* written by a remaining step (the planner gives it an arena slot) */
  WT_ST_VIEW    /* output 0 of a view step (Reshape-like ops): input 0's bytes */
};

/* A node left to run. The caller may keep its own per-step fields after these: the pass's
 * steps are wt_shape_pass.step_size bytes apart (see wt_shape_step_at). */
typedef struct wt_shape_step {
  const wt_op_def *op;
  const wt_cpu_kernel *kernel;   /* how the CPU runs op (folding, and the plan's run) */
  const wt_node *node;
  wt_tensor *out;                /* NULL, or the outputs' descriptions when some are omitted (no
                                    value holds those): inputs and outputs are the values' own */
  void *params;                  /* the op's params (see WT_PARAMS): own allocation, or zeros
                                    (shared) when params_bytes is 0, or in the caller's block */
  size_t scratch_bytes;          /* the kernel's (its scratch function, after infer) */
  uint16_t n_in, n_out;          /* the node's (checked to fit) */
  uint16_t params_bytes;         /* <= WT_PARAMS_MAX */
  uint8_t view;                  /* output 0 shares input 0's buffer */
  uint8_t mark;                  /* 0; the caller's (the planner: run by the step before), in
                                    a byte the padding has anyway: plans keep many steps */
} wt_shape_step;

typedef struct wt_shape_pass {
  const wt_graph *g;
  const wt_tensor *inputs;       /* data NULL when only shapes are wanted */
  wt_tensor *vals;               /* every value's dtype and shape, and data once known */
  uint8_t *storage;              /* enum wt_storage, per value */
  void *steps;                   /* n_steps steps, step_size bytes apart, in run order */
  size_t step_size;
  int n_steps;
  uint8_t *keyed;                /* graph input k's values determined shapes (or folding) */
  void **statics;                /* the folded constants, one allocation each */
  int n_statics;
  void *params_block;            /* set by a caller that moved the steps' params into one block:
                                    a step folded later then frees none */
  uint8_t stand_ins;             /* set by the caller after begin: the inputs' symbolic dims
                                    hold stand-in sizes (wt_graph_infer_shapes), not sizes anyone
                                    gave: values are neither checked against this build's address
                                    space nor allocated by folding unless small (the limits are
                                    checked when a plan meets real input shapes) */
  const struct wt_exec *exec;    /* set by the caller after begin: the runner's settings the
                                    ops' infer reads (ops/exec.h); NULL: the defaults */
} wt_shape_pass;

static inline wt_shape_step *wt_shape_step_at(const wt_shape_pass *sp, int s) {
  return (wt_shape_step *)((char *)sp->steps + sp->step_size * (size_t)s);
}

/* Checks the graph's ops and the inputs (wt_check_inputs), then sets up sp for g: initializers
 * and graph inputs described, room for a step per node of step_size (>= sizeof(wt_shape_step))
 * zeroed bytes. inputs[k] describes graph input k (dtype, shape, data or NULL); it must outlive
 * the pass's use. On error sp holds nothing to release. */
int wt_shape_pass_begin(wt_shape_pass *sp, const wt_graph *g, const wt_tensor *inputs,
                        size_t step_size);
/* Infers every node in order; folds those whose outputs can be had now, keeps the others as
 * steps. Errors name the node, op and opset. */
int wt_shape_pass_walk(wt_shape_pass *sp);
/* The value of v before any run, if it can be had: initializers and folded constants; integer
 * graph inputs with data (the pass then marks them keyed); or small values computed by steps
 * already walked whose own inputs can be had, folded now (those steps leave the list). NULL
 * otherwise. */
const wt_tensor *wt_shape_value(wt_shape_pass *sp, int v);
/* Frees what the pass owns (the arrays a caller took and set to NULL excepted). */
void wt_shape_pass_release(wt_shape_pass *sp);
/* Frees what a step owns: its omitted outputs' descriptions, its params unless in params_block. */
void wt_shape_step_release(wt_shape_step *st, const void *params_block);

/* rc with the node, op and opset in front, as every error of a node's infer or run reads. */
int wt_node_error(int rc, const wt_node *n, int opset);

/* Checks the caller's inputs against the graph's declared inputs (count, dtype, rank, fixed and
 * symbolic dims); the message names the input and shows expected vs actual shapes. */
int wt_check_inputs(const wt_graph *g, int n_inputs, const wt_tensor *inputs);

/* Fills dtype/rank/dims of every value of g from its graph inputs' declared types, keeping
 * symbolic dims symbolic (a dim that follows "batch" is written as "batch"; one derived from
 * it linearly as "batch*4", others as unknown). Works by running the shape pass three times
 * with different stand-in values for each symbolic dim (~1000-2000; smaller ones, ~100 then
 * ~10, when the model caps a dim below those) and comparing; nothing of stand-in size is
 * allocated or checked against this build's memory. Inputs must have a declared dtype and
 * rank. */
int wt_graph_infer_shapes(wt_graph *g);

#endif
