/* The WebGPU backend's side in the core, which needs no GPU: every entry of its kernel tables
 * runs a defined op; a GPU program places every value it binds inside its buffer, 256-byte
 * aligned; a view shares its input's bytes; a dispatch that would bind one value twice reads a
 * copy; an accumulator's value is written straight into its buffer when the overwrite flag is
 * set; an op without a GPU kernel is an error naming every such op and a node using it; optional
 * outputs a node omits are not bound. (The programs themselves run in tests/js/webgpu*.test.mjs.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/kernel.h"
#include "check.h"
#include "runtime/gpu_program.h"

static void check_key(const wt_kernel_key *key, void *user) {
  int *n = user;
  (*n)++;
  if (!wt_op_find(key->domain, key->op_type)) {
    fprintf(stderr, "the webgpu kernel of %s%s%s runs no defined op\n", key->domain, key->domain[0] ? "::" : "",
            key->op_type);
    wt_check_failures++;
  }
}

static int input(wt_graph *g, const char *name, int rank, const int64_t *dims) {
  int v = wt_graph_value(g, name);
  g->values[v].dtype = WT_FLOAT;
  wt_value_set_shape(g, v, rank, dims);
  wt_graph_add_input(g, v);
  return v;
}

static int initializer(wt_graph *g, const char *name, int dtype, int64_t n, const void *data, size_t bytes) {
  int v = wt_graph_value(g, name);
  g->values[v].flags |= WT_VALUE_INITIALIZER;
  g->values[v].dtype = (int8_t)dtype;
  wt_value_set_shape(g, v, 1, &n);
  g->values[v].data = malloc(bytes);
  memcpy(g->values[v].data, data, bytes);
  g->values[v].nbytes = bytes;
  return v;
}

static int aligned_inside(const wt_gpu_program *p, wt_gpu_region r) {
  return r.buffer >= 0 && r.offset % 256 == 0 && r.bytes % 4 == 0 &&
         r.offset + r.bytes <= wt_gpu_program_buffer_bytes(p, r.buffer);
}

/* y = Relu(Reshape(x * x, [2, 6])) + b: a copy, Mul, a view, Relu, Add. */
static void test_program(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", 2, (const int64_t[]){3, 4});
  static const float bias[6] = {1, 2, 3, 4, 5, 6};
  static const int64_t to[2] = {2, 6};
  int b = initializer(g, "b", WT_FLOAT, 6, bias, sizeof bias);
  int shape = initializer(g, "shape", WT_INT64, 2, to, sizeof to);
  int sq = wt_graph_value(g, "sq"), r = wt_graph_value(g, "r"), a = wt_graph_value(g, "a"), y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Mul", "", "square", 2, (int[]){x, x}, 1, &sq);
  wt_graph_add_node(g, "Reshape", "", "reshape", 2, (int[]){sq, shape}, 1, &r);
  wt_graph_add_node(g, "Relu", "", "relu", 1, &r, 1, &a);
  wt_graph_add_node(g, "Add", "", "bias", 2, (int[]){a, b}, 1, &y);
  wt_graph_add_output(g, y);
  wt_tensor in = {.dtype = WT_FLOAT, .rank = 2, .dims = {3, 4}};
  wt_gpu_program *p = NULL;
  CHECK_OK(wt_gpu_program_build(g, &in, NULL, NULL, &p));
  if (p) {
    const wt_gpu_step *st;
    int n = wt_gpu_program_steps(p, &st);
    CHECK(n == 4); /* copy, Mul, Relu, Add: the Reshape is a view */
    CHECK(n == 4 && !strcmp(st[0].d.program, "unary") && !strcmp(st[1].d.program, "binary") &&
          !strcmp(st[2].d.program, "unary") && !strcmp(st[3].d.program, "binary"));
    if (n == 4) {
      /* the copy reads x and Mul reads x and the copy: no two bindings overlap */
      CHECK(st[0].regions[0].offset == wt_gpu_program_input(p, 0).offset);
      CHECK(st[1].regions[0].offset == st[0].regions[0].offset && st[1].regions[1].offset == st[0].regions[1].offset);
      /* Relu reads Mul's output through the view */
      CHECK(st[2].regions[0].buffer == st[1].regions[2].buffer && st[2].regions[0].offset == st[1].regions[2].offset);
      /* the bias is a constant, uploaded once */
      CHECK(st[3].regions[1].buffer == WT_GPU_CONST);
      for (int i = 0; i < n; i++)
        for (int k = 0; k < st[i].d.n_bind; k++) CHECK(aligned_inside(p, st[i].regions[k]));
    }
    const wt_gpu_upload *u;
    CHECK(wt_gpu_program_uploads(p, &u) == 1 && u[0].bytes == sizeof bias && !memcmp(u[0].data, bias, sizeof bias));
    const wt_tensor *t;
    wt_gpu_region out = wt_gpu_program_output(p, 0, &t);
    CHECK(aligned_inside(p, out) && out.bytes == 12 * sizeof(float) && t->rank == 2 && t->dims[1] == 6);
    wt_gpu_program_free(p);
  }
  wt_graph_free(g);
}

static void test_missing(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", 2, (const int64_t[]){2, 5});
  int s = wt_graph_value(g, "s"), r = wt_graph_value(g, "r"), y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Cos", "", "cos", 1, &x, 1, &s);
  wt_graph_add_node(g, "Relu", "", "relu", 1, &s, 1, &r);
  wt_graph_add_node(g, "Cos", "", "cos2", 1, &r, 1, &y);
  wt_graph_add_output(g, y);
  wt_tensor in = {.dtype = WT_FLOAT, .rank = 2, .dims = {2, 5}};
  wt_gpu_program *p = NULL;
  CHECK(wt_gpu_program_build(g, &in, NULL, NULL, &p) == WT_ERR_UNSUPPORTED && !p);
  CHECK(strstr(wt_last_error(), "the webgpu backend has no kernel for 1 op of this model: Cos (ai.onnx; node 'cos')"));
  wt_graph_free(g);
}

/* A chain of 8 Relus over 1 MiB values: each value's room is taken again once read, so the
 * arena holds two values at a time; a binding or buffer limit below what the program needs is
 * an error naming it. */
static void test_reuse_and_limits(void) {
  enum { N = 1 << 18, STEPS = 8 };
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int v = input(g, "x", 1, (const int64_t[]){N});
  for (int i = 0; i < STEPS; i++) {
    char name[16];
    snprintf(name, sizeof name, "r%d", i);
    int y = wt_graph_value(g, name);
    wt_graph_add_node(g, "Relu", "", name, 1, &v, 1, &y);
    v = y;
  }
  wt_graph_add_output(g, v);
  wt_tensor in = {.dtype = WT_FLOAT, .rank = 1, .dims = {N}};
  wt_gpu_program *p = NULL;
  CHECK_OK(wt_gpu_program_build(g, &in, NULL, NULL, &p));
  if (p) {
    CHECK(wt_gpu_program_buffer_bytes(p, WT_GPU_ARENA) == 2 * (uint64_t)N * 4);
    const wt_gpu_step *st;
    int n = wt_gpu_program_steps(p, &st);
    for (int i = 0; i < n; i++) CHECK(st[i].regions[0].offset != st[i].regions[1].offset);
    wt_gpu_program_free(p);
  }
  wt_gpu_limits binding = {.max_binding = N * 4 - 256};
  CHECK(wt_gpu_program_build(g, &in, &binding, NULL, &p) == WT_ERR_UNSUPPORTED && !p);
  CHECK(strstr(wt_last_error(), "value 'x' is 1048576 bytes; this GPU binds at most 1048320 bytes"));
  wt_gpu_limits buffer = {.max_buffer = 2 * N * 4 - 256};
  CHECK(wt_gpu_program_build(g, &in, &buffer, NULL, &p) == WT_ERR_UNSUPPORTED && !p);
  CHECK(strstr(wt_last_error(), "an arena buffer of 2097152 bytes on the GPU; this GPU's buffers hold at most 2096896"));
  wt_graph_free(g);
}

/* The steps' programs, in order, joined by spaces (the caller frees). */
static char *programs(const wt_gpu_program *p) {
  const wt_gpu_step *st;
  int n = wt_gpu_program_steps(p, &st);
  char *out = calloc(1, 64 * (size_t)n + 1);
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, " ");
    strcat(out, st[i].d.program);
  }
  return out;
}

/* Optional outputs: ConvGrad asking for dW only is one weight-gradient dispatch; a
 * BatchNormInternal giving Y and the saved statistics (not the running ones) is its statistics
 * into scratch, their outputs, then the normalization. */
static void test_optional_outputs(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  wt_graph_set_opset(g, "com.microsoft", 1);
  int x = input(g, "x", 4, (const int64_t[]){2, 3, 5, 5});
  int w = input(g, "w", 4, (const int64_t[]){4, 3, 3, 3});
  int dy = input(g, "dy", 4, (const int64_t[]){2, 4, 3, 3});
  int c[4];
  for (int i = 0; i < 4; i++) c[i] = input(g, (const char *[]){"scale", "b", "mean", "var"}[i], 1, (const int64_t[]){3});
  int dw = wt_graph_value(g, "dw"), y = wt_graph_value(g, "y"), sm = wt_graph_value(g, "sm"), si = wt_graph_value(g, "si");
  CHECK(wt_graph_add_node(g, "ConvGrad", "com.microsoft", "cg", 3, (int[]){dy, x, w}, 3, (int[]){-1, dw, -1}) >= 0);
  CHECK(wt_graph_add_node(g, "BatchNormInternal", "com.microsoft", "bn", 5, (int[]){x, c[0], c[1], c[2], c[3]}, 5,
                          (int[]){y, -1, -1, sm, si}) >= 0);
  for (int i = 0; i < 4; i++) wt_graph_add_output(g, (int[]){dw, y, sm, si}[i]);
  wt_tensor in[7] = {{.dtype = WT_FLOAT, .rank = 4, .dims = {2, 3, 5, 5}}, {.dtype = WT_FLOAT, .rank = 4, .dims = {4, 3, 3, 3}},
                     {.dtype = WT_FLOAT, .rank = 4, .dims = {2, 4, 3, 3}}};
  for (int i = 3; i < 7; i++) in[i] = (wt_tensor){.dtype = WT_FLOAT, .rank = 1, .dims = {3}};
  wt_gpu_program *p = NULL;
  CHECK_OK(wt_gpu_program_build(g, in, NULL, NULL, &p));
  if (p) {
    char *names = programs(p);
    CHECK(!strcmp(names, "conv_wgrad bn_stats bn_running bn_apply"));
    free(names);
    const wt_gpu_step *st;
    int n = wt_gpu_program_steps(p, &st);
    for (int i = 0; i < n; i++)
      for (int k = 0; k < st[i].d.n_bind; k++) CHECK(st[i].regions[k].buffer < 0 || aligned_inside(p, st[i].regions[k]));
    /* the running statistics are not bound: placeholders */
    CHECK(n == 4 && st[2].regions[4].buffer < 0 && st[2].regions[5].buffer < 0 && st[2].regions[6].buffer >= 0);
    wt_gpu_program_free(p);
  }
  wt_graph_free(g);
}

/* InPlaceAccumulatorV2(buf, Relu(x), flag): with the overwrite flag true the Relu writes into
 * the buffer's room and the accumulator only sets its flag; with it false the Relu's output has
 * its own room and is added. */
static void test_gradient_into_buffer(void) {
  enum { N = 64 };
  for (int overwrite = 0; overwrite <= 1; overwrite++) {
    wt_graph *g = wt_graph_new();
    wt_graph_set_opset(g, "", 17);
    wt_graph_set_opset(g, "com.microsoft", 1);
    int buf = input(g, "buf", 1, (const int64_t[]){N}), x = input(g, "x", 1, (const int64_t[]){N});
    int flag = input(g, "flag", 1, (const int64_t[]){1});
    g->values[flag].dtype = WT_BOOL;
    int r = wt_graph_value(g, "r"), updated = wt_graph_value(g, "updated"), out = wt_graph_value(g, "out");
    wt_graph_add_node(g, "Relu", "", "relu", 1, &x, 1, &r);
    wt_graph_add_node(g, "InPlaceAccumulatorV2", "com.microsoft", "acc", 3, (int[]){buf, r, flag}, 2, (int[]){updated, out});
    wt_graph_add_output(g, updated);
    uint8_t value = (uint8_t)overwrite;
    wt_tensor in[3] = {{.dtype = WT_FLOAT, .rank = 1, .dims = {N}}, {.dtype = WT_FLOAT, .rank = 1, .dims = {N}},
                       {.dtype = WT_BOOL, .rank = 1, .dims = {1}, .data = &value}};
    wt_gpu_program *p = NULL;
    CHECK_OK(wt_gpu_program_build(g, in, NULL, NULL, &p));
    if (p) {
      const wt_gpu_step *st;
      int n = wt_gpu_program_steps(p, &st);
      wt_gpu_region b = wt_gpu_program_input(p, 0);
      CHECK(n == 2 && !strcmp(st[1].d.program, "accumulate"));
      if (n == 2) {
        int into = st[0].regions[1].buffer == b.buffer && st[0].regions[1].offset == b.offset;
        CHECK(into == overwrite);
        CHECK((st[1].regions[1].buffer < 0) == overwrite); /* the value is not bound again */
      }
      wt_gpu_program_free(p);
    }
    wt_graph_free(g);
  }
}

int main(void) {
  int n = 0;
  wt_backend_webgpu.each(check_key, &n);
  CHECK(n > 10);
  test_program();
  test_missing();
  test_reuse_and_limits();
  test_optional_outputs();
  test_gradient_into_buffer();
  CHECK_DONE();
}
