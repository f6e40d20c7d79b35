/* The GPU program's arena layout (gpu_arena.h). */
#include "runtime/gpu_arena.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static uint64_t blocks(uint64_t bytes) { return (bytes + 255) / 256 * 256; }

uint64_t wt_gpu_arena_take(wt_gpu_arena *a, uint64_t bytes) {
  bytes = blocks(bytes ? bytes : 1);
  for (int i = 0; i < a->n_holes; i++) {
    wt_gpu_hole *h = &a->holes[i];
    if (h->bytes < bytes) continue;
    uint64_t at = h->offset;
    h->offset += bytes;
    h->bytes -= bytes;
    if (!h->bytes) memmove(h, h + 1, sizeof *h * (size_t)(--a->n_holes - i));
    return at;
  }
  uint64_t at = a->top;
  a->top += bytes;
  if (a->top > a->peak) a->peak = a->top;
  return at;
}

int wt_gpu_arena_give(wt_gpu_arena *a, uint64_t offset, uint64_t bytes) {
  bytes = blocks(bytes ? bytes : 1);
  int i = 0;
  while (i < a->n_holes && a->holes[i].offset < offset) i++;
  int before = i > 0 && a->holes[i - 1].offset + a->holes[i - 1].bytes == offset;
  int after = i < a->n_holes && offset + bytes == a->holes[i].offset;
  if (before && after) {
    a->holes[i - 1].bytes += bytes + a->holes[i].bytes;
    memmove(&a->holes[i], &a->holes[i + 1], sizeof *a->holes * (size_t)(--a->n_holes - i));
  } else if (before) {
    a->holes[i - 1].bytes += bytes;
  } else if (after) {
    a->holes[i].offset = offset;
    a->holes[i].bytes += bytes;
  } else {
    if (a->n_holes == a->cap_holes) {
      int cap = a->cap_holes ? 2 * a->cap_holes : 16;
      wt_gpu_hole *h = realloc(a->holes, sizeof *h * (size_t)cap);
      if (!h) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      a->holes = h;
      a->cap_holes = cap;
    }
    memmove(&a->holes[i + 1], &a->holes[i], sizeof *a->holes * (size_t)(a->n_holes++ - i));
    a->holes[i] = (wt_gpu_hole){offset, bytes};
  }
  /* room given back at the top lowers it */
  if (a->n_holes && a->holes[a->n_holes - 1].offset + a->holes[a->n_holes - 1].bytes == a->top) {
    a->top = a->holes[a->n_holes - 1].offset;
    a->n_holes--;
  }
  return WT_OK;
}

void wt_gpu_arena_release(wt_gpu_arena *a) {
  free(a->holes);
  memset(a, 0, sizeof *a);
}
