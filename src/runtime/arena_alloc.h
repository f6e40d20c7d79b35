/* Offset allocator used at plan time to lay values out in one arena: best-fit over a sorted
 * free list with coalescing; the arena's size is the high-water mark. 64-byte granules. */
#ifndef WT_RUNTIME_ARENA_ALLOC_H
#define WT_RUNTIME_ARENA_ALLOC_H

#include <stddef.h>

typedef struct wt_arena_block {
  size_t off, size;
} wt_arena_block;

typedef struct wt_arena_alloc {
  wt_arena_block *free_list;     /* sorted by offset, never adjacent */
  int n_free, cap_free;
  size_t high_water;
} wt_arena_alloc;

void wt_arena_alloc_init(wt_arena_alloc *a);
void wt_arena_alloc_release(wt_arena_alloc *a);
/* Reserves `size` bytes (rounded up to 64); returns non-zero only when out of memory. */
int wt_arena_alloc_take(wt_arena_alloc *a, size_t size, size_t *off);
void wt_arena_alloc_give(wt_arena_alloc *a, size_t off, size_t size);

#endif
