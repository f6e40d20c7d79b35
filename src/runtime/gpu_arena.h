/* The GPU program's arena layout: first-fit over 256-byte blocks (a storage binding's offset
 * alignment), with the room of a value given back after its last reader. */
#ifndef WT_RUNTIME_GPU_ARENA_H
#define WT_RUNTIME_GPU_ARENA_H

#include <stdint.h>

typedef struct wt_gpu_hole {
  uint64_t offset, bytes;
} wt_gpu_hole;

typedef struct wt_gpu_arena {
  uint64_t top;                  /* bytes laid out now */
  uint64_t peak;                 /* the most top has been: the arena's size */
  wt_gpu_hole *holes;            /* given-back room below top, by offset, never adjacent */
  int n_holes, cap_holes;
} wt_gpu_arena;

/* Room for `bytes` (rounded up to 256): the first hole that fits, else the top. */
uint64_t wt_gpu_arena_take(wt_gpu_arena *a, uint64_t bytes);
/* Gives room back (offset and bytes as taken); WT_ERR_NO_MEMORY when the list cannot grow. */
int wt_gpu_arena_give(wt_gpu_arena *a, uint64_t offset, uint64_t bytes);
void wt_gpu_arena_release(wt_gpu_arena *a);

#endif
