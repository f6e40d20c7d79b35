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
  size_t in_use, peak_in_use;    /* bytes taken and not given back; their maximum (the lower
                                    bound on high_water that a perfect layout would reach) */
} wt_arena_alloc;

void wt_arena_alloc_init(wt_arena_alloc *a);
void wt_arena_alloc_release(wt_arena_alloc *a);
/* Reserves `size` bytes (rounded up to 64); returns non-zero only when out of memory. */
int wt_arena_alloc_take(wt_arena_alloc *a, size_t size, size_t *off);
void wt_arena_alloc_give(wt_arena_alloc *a, size_t off, size_t size);

/* Offline layout, once every lifetime is known: a buffer of `size` bytes live from step `first`
 * to step `last` (inclusive). wt_arena_pack places the largest first, each in the tightest gap
 * left by the buffers already placed whose lifetimes overlap its own (greedy by size), which
 * lands much closer to the live peak than allocating in step order. Sets every `off` and
 * *high_water; returns non-zero when out of memory (or past half the address space). */
typedef struct wt_arena_item {
  size_t size, off;
  int first, last;
} wt_arena_item;
int wt_arena_pack(wt_arena_item *items, int n, size_t *high_water);

#endif
