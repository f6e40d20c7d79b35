/* The op contract. An op is defined once, backend-neutral, in one file of src/ops/ (one file per
 * op family): its attribute parsing and shape/dtype inference (`infer`, at plan time) and its
 * gradient rule (`grad`, src/grad/grad.h). How a backend runs it is that backend's kernel, in
 * the backend's folder (src/backend/<name>/, the CPU's contract: backend/cpu/kernel.h); the
 * params struct infer fills is what the definition hands its kernels, declared in the family's
 * header (ops/<family>.h). Adding an op: its definition here, and one kernel in each backend
 * that has it (the CPU backend has every op: a native test fails on a definition without a CPU
 * kernel or a kernel without a definition).
 * Each file of src/ops/ that defines ops exports a NULL-terminated table `wt_ops_<file>[]`
 * listed in registry.c; definitions are static, so one left out of its table fails the build.
 * Families of like ops (unary, binary, Reduce*) generate definitions and table from one list
 * (an X-macro: unary_ops.h, BINARY_OPS, REDUCE_OPS): adding such an op is one line there, which
 * generates its kernel entries too.
 * An op that shares infer/grad with others finds which one it is through ctx->op (its
 * definition's variant / spec), never by comparing the node's op_type; what the rest of webtrain
 * must know of an op (a gradient op, a Relu, running statistics ...) is a flag of its definition.
 *
 * infer: ctx->in[i] holds dtype/rank/dims of node input i (dtype WT_UNDEFINED for an omitted
 *   optional input; data is NULL). It must set dtype/rank/dims of every ctx->out[i], may store
 *   parsed attributes / derived sizes in a struct taken with WT_PARAMS(ctx, T) (zeroed; the plan
 *   step keeps sizeof(T) bytes of it and hands them to the kernel as its params).
 *   When an output shape depends on an input's *values* (Reshape's shape, Slice's starts ...),
 *   call wt_infer_value(ctx, i): it returns the input with data when the planner can know it
 *   before the run (initializers, Constant, Shape chains, the caller's int inputs), else NULL.
 *   On bad input return wt_errorf(code, ...) saying what is wrong and what was expected (the
 *   planner prefixes the node, op and opset), one code per kind of error:
 *     WT_ERR_SHAPE        an input's dtype or shape is not one the op takes: a dtype the op does
 *                         not take (whether ONNX forbids it or webtrain does not implement it for
 *                         this op), inputs that disagree, a wrong rank or dim (wt_expect_dtype,
 *                         wt_expect_float, wt_expect_shape_like);
 *     WT_ERR_INVALID_ARG  an attribute value outside its domain, a wrong number of inputs;
 *     WT_ERR_UNSUPPORTED  valid ONNX webtrain does not implement: a mode, a legacy form, an
 *                         attribute holding a dtype webtrain has no type for (double ...);
 *     WT_ERR_INTERNAL     a webtrain bug.
 *   Gradient rules (wt_grad_fail) use the same codes. */
#ifndef WT_OPS_OP_H
#define WT_OPS_OP_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"
#include "base/tensor.h"
#include "ir/ir.h"
#include "ops/exec.h"

#define WT_PARAMS_MAX 512

struct wt_op_def;

typedef struct wt_infer_ctx {
  const wt_node *node;
  const struct wt_op_def *op;   /* the node's definition: its variant / spec (never strcmp the name) */
  int opset;                    /* version of the node's domain in the model */
  int n_in;
  const wt_tensor *in;
  int n_out;
  wt_tensor *out;
  void *params;                 /* WT_PARAMS_MAX bytes, zeroed, 16-byte aligned: use WT_PARAMS */
  size_t params_bytes;          /* how many of them the plan step keeps (set by WT_PARAMS) */
  /* The caller's wt_infer_value (the shape pass's: values known before the run); NULL: an
   * input is known when it carries data (op unit tests). */
  const wt_tensor *(*value)(void *user, int i);
  void *value_user;
  const wt_exec *exec;          /* the runner's settings (ops/exec.h); NULL: the defaults */
} wt_infer_ctx;

struct wt_grad_ctx;             /* defined by src/grad (grad.h) */

enum wt_op_flags {
  /* Output 0 holds exactly the bytes of input 0 (Reshape, Flatten, Squeeze, Unsqueeze, Identity):
   * the planner may give it input 0's buffer; run must then do nothing (check out.data == in.data). */
  WT_OP_VIEW = 1u << 0,
  /* Outputs depend only on input shapes, never on input data (Shape, Size): folded at plan time. */
  WT_OP_SHAPE_ONLY = 1u << 1,
  /* Output 0 may be written over an input with its dtype and shape: run never reads an element
   * of such an input after writing the output element at that index (elementwise ops; row-wise
   * ones that read a row before writing it). The planner does so when that input is read for
   * the last time, so the step needs no new buffer. */
  WT_OP_INPLACE = 1u << 2,
  /* A gradient op: computes gradients in a training graph (ReluGrad, SoftmaxGrad_13, DivGrad,
   * BiasGeluGrad_dX, BroadcastGradientArgs, InPlaceAccumulatorV2 ...), never part of an inference
   * model. The session finds the backward pass by it. */
  WT_OP_GRADIENT = 1u << 3,
  /* The training-mode form of a forward op that the gradient rule substitutes for it, to keep
   * what the backward pass reads (BatchNormInternal, LSTMTraining, GRUTraining): forward pass,
   * but like a gradient op never part of an inference model. */
  WT_OP_TRAINING = 1u << 4,
  /* y = max(x, 0) elementwise (Relu): an op whose run can end in that clamp may absorb it
   * (MatMul and Gemm's epilogue) without knowing its name. */
  WT_OP_RELU = 1u << 5,
  /* Batch-normalization statistics: with attribute training_mode set, outputs 1 and 2 are the
   * updated running statistics of inputs 3 and 4 (the module writes them back into the state). */
  WT_OP_RUNNING_STATS = 1u << 6,
  /* Accumulates input 1 into buffer input 0, overwriting it when the bool input 2 is true
   * (InPlaceAccumulatorV2): the planner may then have input 1 written straight into the buffer. */
  WT_OP_ACCUMULATOR = 1u << 7,
  /* Converts its input 0 to the dtype of attribute 'to' (Cast). From float16 to float, when every
   * reader of the output reads float16 itself (its kernel's half_inputs), the shape pass leaves
   * the float16 bytes as they are (a view, nothing runs): frozen float16 weights are widened where
   * a kernel reads them, never copied whole into float32. */
  WT_OP_WIDEN = 1u << 8,
  /* Output 0 is input 0 with its axes permuted (Transpose): its params start with the
   * permutation, int perm[WT_MAX_RANK] (out axis i is in axis perm[i]). The planner folds a swap
   * of the last two axes into the steps around it that can take it (absorb, read_swapped). */
  WT_OP_TRANSPOSE = 1u << 9
};

typedef struct wt_op_def {
  const char *domain;           /* "" (ai.onnx) or "com.microsoft" */
  const char *op_type;
  int min_inputs, max_inputs;   /* checked by the planner before infer */
  int min_outputs, max_outputs;
  int (*infer)(wt_infer_ctx *ctx);
  int (*grad)(struct wt_grad_ctx *ctx); /* NULL until the op has a gradient rule */
  const char *no_grad;          /* with grad NULL by design: why, and what a model can do instead
                                   (the autodiff's error quotes it) */
  uint32_t flags;
  /* Which member of its family the op is, for ops that share infer/grad (and kernels): infer reads
   * ctx->op->variant / ctx->op->spec (a family-private struct), a rule c->op, instead of
   * comparing the node's op_type. */
  int variant;
  const void *spec;
} wt_op_def;

/* A definition's gradient column in a family's op list (an X-macro): the rule, or none by design
 * with the reason the autodiff's error gives. */
#define WT_GRAD(rule) .grad = (rule)
#define WT_NO_GRAD(why) .no_grad = (why)

/* The op's parameter struct T in ctx->params. A plan step keeps only the bytes its op asked for
 * (steps are many, WT_PARAMS_MAX is for the largest op), so infer takes them through this. */
#define WT_PARAMS(ctx, T) \
  ((T *)wt_infer_params((ctx), sizeof(T) + 0 * sizeof(char[sizeof(T) <= WT_PARAMS_MAX ? 1 : -1])))
static inline void *wt_infer_params(wt_infer_ctx *ctx, size_t bytes) {
  if (ctx->params_bytes < bytes) ctx->params_bytes = bytes;
  return ctx->params;
}

/* The input with its data when known before the run, else NULL (see above). */
static inline const wt_tensor *wt_infer_value(wt_infer_ctx *ctx, int i) {
  if (i >= ctx->n_in || ctx->in[i].dtype == WT_UNDEFINED) return NULL;
  if (ctx->value) return ctx->value(ctx->value_user, i);
  return ctx->in[i].data ? &ctx->in[i] : NULL;
}

/* True when node input i is present (not an omitted optional input). */
static inline int wt_has_input(const wt_tensor *in, int n_in, int i) {
  return i < n_in && in[i].dtype != WT_UNDEFINED;
}

/* infer's checks of input `idx` (named `name`): its dtype, and that it has the shape of input
 * `like` (named `like_name`). WT_ERR_SHAPE saying what it has and what was expected. */
int wt_expect_dtype(const wt_tensor *t, const char *name, int idx, int dtype);
static inline int wt_expect_float(const wt_tensor *t, const char *name, int idx) {
  return wt_expect_dtype(t, name, idx, WT_FLOAT);
}
int wt_expect_shape_like(const wt_tensor *t, const char *name, int idx, const wt_tensor *like,
                         const char *like_name);

/* Multidirectional (numpy) broadcasting of n shapes into (*rank, dims). Error names the shapes. */
int wt_broadcast_shapes(int n, const wt_tensor *const *ts, int *rank, int64_t *dims);

/* Registry lookup; NULL when webtrain has no such op. */
const wt_op_def *wt_op_find(const char *domain, const char *op_type);
/* WT_OK when every node's op is implemented; otherwise one error naming every missing op
 * (type, domain, opset) and the nodes that use it. */
int wt_graph_check_ops(const wt_graph *g);
/* Calls fn for every registered op in sorted (domain, op_type) order. */
void wt_op_each(void (*fn)(const wt_op_def *op, void *user), void *user);

/* Copies a shape into an output tensor description. */
static inline void wt_set_shape(wt_tensor *t, int dtype, int rank, const int64_t *dims) {
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
}

#endif
