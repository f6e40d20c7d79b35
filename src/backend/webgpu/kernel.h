/* The WebGPU backend's kernel contract. The core plans and the GPU runs: for each step of a
 * plan, the step's kernel says which WGSL program runs it (a file of this folder, shipped to
 * JavaScript as text), over how many workgroups, with which of the step's values bound, and
 * the uniform words (shapes, strides, attributes) it reads. runtime/gpu_program.c gathers these
 * into a program that the JavaScript device bridge (js/gpu/) builds once and replays: nothing
 * here touches a GPU, and C never waits on one.
 *
 * encode: ctx carries the step's node, params (what the op's infer filled: the same struct the
 *   CPU kernels read) and its inputs' and outputs' dtypes and shapes (an input's data: its bytes
 *   where the build knows them, else NULL). It fills up to `cap` dispatches and returns how
 *   many, or a negated status (WT_GPU_FAIL: an error naming what the kernel cannot run, an
 *   unsupported dtype, attribute or shape). It may ask for scratch (ctx->scratch[k] bytes) that
 *   its dispatches bind as WT_GPU_SCRATCH(k).
 *
 * Binding convention of every program: @group(0) @binding(0) is the dispatch's uniform slot
 * (WT_GPU_UNIFORM_BYTES), then one storage buffer per entry of `bind`, in order, declared
 * `read_write` (a buffer bound read-only and read-write in one dispatch is a validation error
 * even on disjoint ranges). A program must use every binding it declares (layouts are derived
 * from the program). */
#ifndef WT_BACKEND_WEBGPU_KERNEL_H
#define WT_BACKEND_WEBGPU_KERNEL_H

#include <stdint.h>

#include "backend/backend.h"
#include "ops/conv_geom.h"
#include "ops/op.h"

#define WT_GPU_UNIFORM_BYTES 256
#define WT_GPU_UNIFORM_WORDS (WT_GPU_UNIFORM_BYTES / 4)
#define WT_GPU_MAX_BINDS 8
#define WT_GPU_MAX_DISPATCHES 16
/* Threads per workgroup of the elementwise programs, and the most workgroups along x (a grid
 * longer than that wraps into y). */
#define WT_GPU_WG 256
#define WT_GPU_MAX_GROUPS 65535

/* What a binding holds: input i of the step (WT_GPU_IN(i)), output j (WT_GPU_OUT(j)), scratch
 * k of the step (WT_GPU_SCRATCH(k): room the encoder asked for in ctx->scratch[k], live for the
 * step only), or a 256-byte placeholder (WT_GPU_NONE) for a program's optional operand the step
 * lacks. */
#define WT_GPU_IN(i) ((int8_t)(i))
#define WT_GPU_OUT(j) ((int8_t)(64 + (j)))
#define WT_GPU_SCRATCH(k) ((int8_t)(120 + (k)))
#define WT_GPU_NONE ((int8_t)-1)
#define WT_GPU_SCRATCHES 2
#define WT_GPU_KEY_WORD 4

typedef struct wt_gpu_dispatch {
  const char *program;          /* the WGSL file's name, without .wgsl */
  uint32_t groups[3];
  /* 1: each run writes a Dropout key into uniform words WT_GPU_KEY_WORD and the next (low word
   * first): wt_dropout_key(seed, the session's next draw), the seed read from the two words
   * after them. Dispatches that draw take their draws in step order, as the CPU's steps do. */
  int draws;
  int n_bind;
  int8_t bind[WT_GPU_MAX_BINDS];
  uint32_t uniform[WT_GPU_UNIFORM_WORDS];
} wt_gpu_dispatch;

typedef struct wt_gpu_ctx {
  const wt_node *node;
  const void *params;
  int n_in;
  const wt_tensor *in;           /* data: the value's bytes where the build knows them (an
                                  * initializer, a folded constant, an input the program is
                                  * keyed on), else NULL */
  int n_out;
  const wt_tensor *out;
  uint64_t scratch[WT_GPU_SCRATCHES]; /* set by encode: bytes of each scratch it binds */
  /* bit i: input i lies in input 0's room (the program had an accumulator's value written
   * straight into its buffer): there is nothing to copy or add */
  uint32_t same_room;
} wt_gpu_ctx;

typedef struct wt_gpu_kernel {
  wt_kernel_key key;
  int (*encode)(wt_gpu_ctx *ctx, wt_gpu_dispatch *d, int cap);
} wt_gpu_kernel;

extern const wt_backend wt_backend_webgpu;

/* An encoder's refusal: the error's status, negated (a count of dispatches is never negative). */
#define WT_GPU_FAIL(...) (-wt_errorf(__VA_ARGS__))

/* 0 when `n` elements of `what` ("the output") can be indexed with 32 bits, else WT_GPU_FAIL's
 * value saying so. */
static inline int wt_gpu_check_elems(int64_t n, const char *what) {
  if (n <= (int64_t)UINT32_MAX / 2) return 0;
  return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend indexes with 32 bits; %s is %lld elements", what,
                     (long long)n);
}

/* The kernel running op on the GPU, or NULL. */
const wt_gpu_kernel *wt_gpu_kernel_find(const wt_op_def *op);

/* A grid of ceil(n / per) workgroups, wrapped into y past WT_GPU_MAX_GROUPS along x. Programs
 * recover the linear workgroup index as wg.y * groups.x + wg.x (uniform word 'gx' of each). */
static inline void wt_gpu_grid_1d(wt_gpu_dispatch *d, int64_t n, int64_t per) {
  int64_t g = (n + per - 1) / per;
  if (g < 1) g = 1;
  d->groups[0] = (uint32_t)(g < WT_GPU_MAX_GROUPS ? g : WT_GPU_MAX_GROUPS);
  d->groups[1] = (uint32_t)((g + d->groups[0] - 1) / d->groups[0]);
  d->groups[2] = 1;
}

/* binary.wgsl's ops (c = a op b, broadcast) and its uniform words: n, gx, op, rank, then 8 words
 * each of the output dims and a's and b's strides, then alpha. */
enum wt_gpu_binop { WT_GB_ADD, WT_GB_SUB, WT_GB_MUL, WT_GB_DIV, WT_GB_MIN, WT_GB_MAX, WT_GB_PRELU,
                    WT_GB_RELU_GRAD, WT_GB_SIGMOID_GRAD, WT_GB_TANH_GRAD, WT_GB_LEAKYRELU_GRAD,
                    WT_GB_COPY_A, WT_GB_POW, WT_GB_GELU_GRAD, WT_GB_QUICKGELU_GRAD, WT_GB_FASTGELU_GRAD };
/* The dispatch of binary.wgsl for c = a op b with a, b and c the step's bindings `ba`, `bb`, `bc`
 * (b WT_GPU_NONE for a copy of a), shaped ta, tb (broadcast to) tc: 1, or WT_GPU_FAIL's value
 * when c is too large. */
int wt_gpu_binary_dispatch(wt_gpu_dispatch *d, int op, float alpha, int8_t ba, const wt_tensor *ta,
                           int8_t bb, const wt_tensor *tb, int8_t bc, const wt_tensor *tc);

/* gemm.wgsl over `batches` matrices: y[z] = op(a[z]) op(b[z]) (M x K by K x N, op transposing
 * where ta, tb), a[z] starting at element a_off + z a_stride of binding a (b likewise), y[z] at
 * y_off + z M N of binding y. */
void wt_gpu_gemm_dispatch(wt_gpu_dispatch *d, int8_t a, int64_t a_off, int64_t a_stride, int ta, int8_t b,
                          int64_t b_off, int64_t b_stride, int tb, int8_t y, int64_t y_off, int64_t M, int64_t N,
                          int64_t K, int64_t batches);

/* Element strides of t read at y's coordinates (t aligned to y's innermost axes, 0 along an
 * axis t is broadcast along), for y's rank. */
void wt_gpu_bcast_strides(const wt_tensor *t, const wt_tensor *y, uint32_t *s);

/* 4-byte words an element of dtype takes on the GPU (float32, int32: 1; int64: 2), or 0 for
 * the dtypes the layout programs do not move (bool, float16: less than a word). */
int wt_gpu_words(int dtype);
/* strided.wgsl's width for dtype: wt_gpu_words, 0 for bool (bytes), -1 for what it does not move. */
int wt_gpu_layout_width(int dtype);

/* strided.wgsl: y[yoff + sum k ys] = x[xoff + sum k xs] over the coordinates k of dims[rank]
 * (elements of `width` words; strides may be negative), x and y the step's bindings bx, by. */
int wt_gpu_strided_dispatch(wt_gpu_dispatch *d, int8_t bx, int8_t by, int rank, const int64_t *dims,
                            int64_t xoff, const int64_t *xs, int64_t yoff, const int64_t *ys, int width);
/* strided.wgsl filling the first n elements of binding by with zeros. */
int wt_gpu_zero_dispatch(wt_gpu_dispatch *d, int8_t by, int64_t n, int width);

/* compare.wgsl's Not of the step's bool input 0 into its output 0 (the unary family's Not). */
int wt_gpu_not_dispatch(wt_gpu_ctx *c, wt_gpu_dispatch *d);

/* The dispatch of softmax.wgsl (mode 0 softmax, 1 log-softmax of a; 2, 3 their gradients with
 * a = dy, b = the forward output) over params' [outer, n, inner] layout. */
struct wt_softmax_params;
int wt_gpu_softmax_dispatch(wt_gpu_dispatch *d, int mode, const struct wt_softmax_params *p, int8_t a, int8_t b,
                            int8_t y);

/* A dispatch copying `words` 4-byte words from its input 0 to its output 0 (a value duplicated
 * where one dispatch would bind it twice). */
void wt_gpu_copy_dispatch(wt_gpu_dispatch *d, int64_t words);

/* dropout.wgsl (mode 0 draw, 1 pass, 2 gradient, 3 gradient pass) over n elements from binding
 * bx to by, the mask binding bm of kind mask_kind (0 none, 1 bool, 2 float); ratio and seed for
 * the draw. */
void wt_gpu_dropout_dispatch(wt_gpu_dispatch *d, int mode, int64_t n, int8_t bx, int8_t bm, int mask_kind, int8_t by,
                             float ratio, uint64_t seed);

/* Dropout's ratio and training flag where the build knows them: the attributes before opset
 * 12, else inputs `ri` and `ti` (absent: 0.5 and false). A ratio or flag only a run knows (a
 * float graph input) is refused naming it; a ratio outside [0, 1] too. */
int wt_gpu_dropout_mode(const wt_gpu_ctx *c, int opset_attrs, float attr_ratio, int attr_training, int ri, int ti,
                        float *ratio, int *training);

/* Whether the step's node asks for output i (an optional output may be absent), and the binding
 * of it: WT_GPU_OUT(i), or WT_GPU_NONE when absent (the program then skips writing it). */
static inline int wt_gpu_wants(const wt_gpu_ctx *c, int i) {
  return i < c->n_out && i < c->node->n_outputs && c->node->outputs[i] >= 0;
}
static inline int8_t wt_gpu_out_or_none(const wt_gpu_ctx *c, int i) {
  return wt_gpu_wants(c, i) ? WT_GPU_OUT(i) : WT_GPU_NONE;
}

/* The dispatch of reduce.wgsl summing src viewed as [outer, n, inner] over its middle axis into
 * dst, divided by `count` where `divide` (a mean). */
void wt_gpu_reduce_dispatch(wt_gpu_dispatch *d, int8_t src, int8_t dst, int64_t outer, int64_t n, int64_t inner,
                            int divide, float count);
/* The same sum (no mean) from element src_off of src into element dst_off on of dst. */
void wt_gpu_sum_dispatch(wt_gpu_dispatch *d, int8_t src, int64_t src_off, int8_t dst, int64_t dst_off, int64_t outer,
                         int64_t n, int64_t inner);

/* A window geometry (ops/conv_geom.h) as 6 vec4u of uniform words from w: img, grid, k, stride,
 * dil, pad (as i32): the layout the conv and pool programs declare. */
static inline void wt_gpu_geom_words(uint32_t *w, const wt_conv_geom *g) {
  for (int a = 0; a < 3; a++) {
    w[a] = (uint32_t)g->img[a];
    w[4 + a] = (uint32_t)g->grid[a];
    w[8 + a] = (uint32_t)g->k[a];
    w[12 + a] = (uint32_t)g->stride[a];
    w[16 + a] = (uint32_t)g->dil[a];
    w[20 + a] = (uint32_t)(int32_t)g->pad[a];
  }
}

static inline void wt_gpu_f32(uint32_t *w, float v) {
  union { float f; uint32_t u; } c = {.f = v};
  *w = c.u;
}

#endif
