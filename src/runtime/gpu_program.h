/* A GPU program: what the WebGPU backend runs for a graph at given input shapes, as data. The
 * core plans (shapes, constant folding, the kernels' dispatches, where every value lives); the
 * JavaScript device bridge (js/gpu/) creates the buffers, pipelines and bind groups once and
 * replays the dispatches on each run. Nothing here touches a GPU.
 *
 * Memory: buffer WT_GPU_CONST holds the initializers and folded constants the dispatches read
 * (uploaded once, from `data` of its uploads); buffer WT_GPU_ARENA the graph inputs, every value
 * a dispatch writes and the outputs. Every region starts 256-byte aligned (a storage binding's
 * offset alignment) and its size is a multiple of 4 bytes. A view (Reshape ...) shares its
 * input's region. A value's room in the arena is given back after its last reader (its views'
 * readers included) and taken again by values written later; the graph's outputs keep theirs. */
#ifndef WT_RUNTIME_GPU_PROGRAM_H
#define WT_RUNTIME_GPU_PROGRAM_H

#include <stdint.h>

#include "backend/webgpu/kernel.h"
#include "ir/ir.h"

/* The program's own buffers; ids from WT_GPU_BUFFERS on are the caller's (placed inputs). */
enum { WT_GPU_CONST, WT_GPU_ARENA, WT_GPU_BUFFERS };

typedef struct wt_gpu_region {
  int buffer;                    /* WT_GPU_CONST or WT_GPU_ARENA; -1: none (the placeholder) */
  uint64_t offset, bytes;
} wt_gpu_region;

typedef struct wt_gpu_upload {
  uint64_t offset;               /* in WT_GPU_CONST */
  const void *data;
  uint64_t bytes;
} wt_gpu_upload;

typedef struct wt_gpu_step {
  wt_gpu_dispatch d;             /* .bind is resolved into `regions` */
  wt_gpu_region regions[WT_GPU_MAX_BINDS];
} wt_gpu_step;

typedef struct wt_gpu_program wt_gpu_program;

/* The device's limits a program must fit (0: none): the largest storage binding and buffer. */
typedef struct wt_gpu_limits {
  uint64_t max_binding, max_buffer;
} wt_gpu_limits;

/* Plans g for the given inputs (dtype, shape; data for the inputs that fix shapes or fold).
 * placed (NULL, or one region per graph input, buffer -1 where not placed): inputs that live in
 * the caller's buffers (a module's parameters and gradient buffers, which persist across runs),
 * written in place where the graph writes them (gradient accumulation).
 * An op without a GPU kernel is WT_ERR_UNSUPPORTED naming every such op and a node using it; a
 * value or buffer over a limit is WT_ERR_UNSUPPORTED naming it, its size and the limit.
 * limits may be NULL. */
int wt_gpu_program_build(const wt_graph *g, const wt_tensor *inputs, const wt_gpu_limits *limits,
                         const wt_gpu_region *placed, wt_gpu_program **out);
void wt_gpu_program_free(wt_gpu_program *p);

uint64_t wt_gpu_program_buffer_bytes(const wt_gpu_program *p, int buffer);
int wt_gpu_program_uploads(const wt_gpu_program *p, const wt_gpu_upload **out);
int wt_gpu_program_steps(const wt_gpu_program *p, const wt_gpu_step **out);
/* Where graph input k is written (buffer -1: no dispatch reads it). */
wt_gpu_region wt_gpu_program_input(const wt_gpu_program *p, int k);
/* Where graph output k is read, and its dtype and shape (data NULL). */
wt_gpu_region wt_gpu_program_output(const wt_gpu_program *p, int k, const wt_tensor **type);

#endif
