/* Writing a gradient rule: the layer below ops/ (it knows only the IR). A rule is one small
 * function per op, defined next to the op in src/ops/<family>.c and named in its wt_op_def
 * (.grad = ...). It reads the forward node through I(i) / O(i) (value indices of forward
 * inputs/outputs), GO(i) (the gradient of output i, -1 when no gradient flows into it: treat as
 * zero), need(i) (input i needs a gradient), and emits graph nodes that compute GI(i) with
 * wt_grad_op / wt_grad_op1, then wt_grad_set(ctx, i, value). Errors are sticky: after one,
 * emitters return -1 and the rule just returns wt_grad_status(ctx).
 *
 *   static int relu_grad(wt_grad_ctx *c) {
 *     int dx = wt_grad_op1(c, "ReluGrad", WT_MS, 2, (int[]){GO(0), O(0)});
 *     wt_grad_set(c, 0, dx);
 *     return wt_grad_status(c);
 *   }
 *
 * Emitting nodes may reallocate the graph's node array: never hold a wt_node pointer across an
 * emit; use wt_grad_node(c) again. Forward values carry dtypes and (possibly symbolic) shapes
 * from wt_graph_infer_shapes; emitted values do not. */
#ifndef WT_GRAD_GRAD_H
#define WT_GRAD_GRAD_H

#include "ir/ir.h"

#define WT_MS "com.microsoft"

struct wt_op_def;               /* ops/op.h: the rule's own op definition */

typedef struct wt_grad_ctx {
  wt_graph *g;
  int node;                     /* forward node index */
  const struct wt_op_def *op;   /* the forward node's definition (variant / spec, not its name) */
  int opset;                    /* the model's ai.onnx opset */
  const int *go;                /* per forward output: gradient value or -1 */
  int *gi;                      /* per forward input: gradient value set by the rule, or -1 */
  const unsigned char *need;    /* per forward input */
  int rc;                       /* sticky status */
  int *counter;                 /* for unique names */
  int last_node;                /* last node emitted */
  int n_go;                     /* outputs of the forward node when the rule started */
} wt_grad_ctx;

const wt_node *wt_grad_node(const wt_grad_ctx *c);
int wt_grad_I(const wt_grad_ctx *c, int i);
int wt_grad_O(const wt_grad_ctx *c, int i);
int wt_grad_GO(const wt_grad_ctx *c, int i);
int wt_grad_need(const wt_grad_ctx *c, int i);
/* Forward value (dtype, rank, dims with -1 for symbolic). */
const wt_value *wt_grad_value(const wt_grad_ctx *c, int v);
int wt_grad_status(const wt_grad_ctx *c);
/* Fails the rule with a message (the autodiff prefixes the node). Returns the status. */
int wt_grad_fail(wt_grad_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Emits op_type(ins) with n_out fresh outputs (written to outs, may be NULL when n_out == 1
 * and the caller uses the return of wt_grad_op1). Returns the new node's index, -1 on error.
 * Inputs may be -1 (an omitted optional input). Set attributes with wt_node_set_*(c->g, ...). */
int wt_grad_op(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins,
               int n_out, int *outs);
/* Single-output form: returns the output value, -1 on error. */
int wt_grad_op1(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins);
/* The node index of the last node emitted (for attributes after wt_grad_op1). */
int wt_grad_last(const wt_grad_ctx *c);
/* Makes the forward node produce its optional output `index` (MaxPool's Indices,
 * LayerNormalization's Mean/InvStdDev, SoftmaxCrossEntropyLoss's log_prob ...), adding it
 * if the model omitted it, and returns its value. */
int wt_grad_forward_output(wt_grad_ctx *c, int index);
/* Constants, as initializers. */
int wt_grad_const_f32(wt_grad_ctx *c, float v);           /* scalar */
int wt_grad_const_i64s(wt_grad_ctx *c, const int64_t *v, int n);  /* 1-D */
/* Records the gradient of input i (the autodiff adds contributions that share a value). */
void wt_grad_set(wt_grad_ctx *c, int i, int value);

/* Sums dy (shaped like output `out_index`) over the axes broadcasting added, so the result has
 * the shape of input `in_index` (multidirectional broadcasting). Returns dy when no reduction
 * is needed. */
int wt_grad_unbroadcast(wt_grad_ctx *c, int dy, int out_index, int in_index);
/* ReduceSum(x, axes, keepdims) honouring the opset (axes attribute before 13, input from 13). */
int wt_grad_reduce_sum(wt_grad_ctx *c, int x, const int64_t *axes, int n_axes, int keepdims);
/* Unsqueeze(x, axes) honouring the opset (axes attribute before 13, input from 13). */
int wt_grad_unsqueeze(wt_grad_ctx *c, int x, const int64_t *axes, int n_axes);
/* Expand(x, Shape(like)): x broadcast to the runtime shape of value `like`. */
int wt_grad_expand_like(wt_grad_ctx *c, int x, int like);
/* The int64 values of a forward value known while building the graph (an initializer, or a
 * Constant node's output): returns the count (<= cap) or -1 when not known. */
int wt_grad_const_ints(const wt_grad_ctx *c, int v, int64_t *out, int cap);
/* Reshape(x, Shape(like)): x reshaped to the runtime shape of value `like`. */
int wt_grad_reshape_like(wt_grad_ctx *c, int x, int like);

/* Drops output k of emitted node `node` (nobody needs it: written with an empty name). */
void wt_grad_omit_output(wt_grad_ctx *c, int node, int k);
/* Emits op_type(ins) whose output k is the gradient of forward input map[k] (map NULL: input k)
 * and sets those gradients; outputs of inputs that need none are omitted, the trailing ones
 * dropped. Returns the node index (for attributes), -1 on error. */
int wt_grad_op_grads(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins,
                     int n_out, const int *map);
/* A float tensor of `value` with the runtime shape of value v: ConstantOfShape(Shape(v)) (the
 * value attribute omitted for 0, ConstantOfShape's default). */
int wt_grad_fill_like(wt_grad_ctx *c, int v, float value);
/* op_type(a, b) in the ai.onnx domain: its output, -1 on error. */
int wt_grad_op2(wt_grad_ctx *c, const char *op_type, int a, int b);
/* Copies the forward node's attributes onto emitted node dst, in the forward node's order: those
 * named in names[0..n) that it has, or all of them when names is NULL. Returns the status. */
int wt_grad_copy_attrs(wt_grad_ctx *c, int dst, const char *const *names, int n);

/* Attributes on emitted node `node` (usually wt_grad_last(c)). Sticky like the emitters: they do
 * nothing after an error or for node < 0, and a failure fails the rule. */
void wt_grad_attr_int(wt_grad_ctx *c, int node, const char *name, int64_t v);
void wt_grad_attr_float(wt_grad_ctx *c, int node, const char *name, float v);
void wt_grad_attr_ints(wt_grad_ctx *c, int node, const char *name, const int64_t *v, int n);
/* Imports `domain` (opset 1) into the graph unless it is already (emitters of com.microsoft ops
 * do so themselves; for a forward node a rule turns into one). */
void wt_grad_use_domain(wt_grad_ctx *c, const char *domain);

#define I(i) wt_grad_I(c, (i))
#define O(i) wt_grad_O(c, (i))
#define GO(i) wt_grad_GO(c, (i))

#endif
