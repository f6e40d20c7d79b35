/* Plan-time offset allocator (see arena_alloc.h). */
#include "runtime/arena_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE 64

static size_t round_up(size_t n) { return (n + GRANULE - 1) / GRANULE * GRANULE; }

void wt_arena_alloc_init(wt_arena_alloc *a) { memset(a, 0, sizeof *a); }

void wt_arena_alloc_release(wt_arena_alloc *a) {
  free(a->free_list);
  memset(a, 0, sizeof *a);
}

static void remove_at(wt_arena_alloc *a, int i) {
  memmove(&a->free_list[i], &a->free_list[i + 1], sizeof *a->free_list * (size_t)(a->n_free - i - 1));
  a->n_free--;
}

int wt_arena_alloc_take(wt_arena_alloc *a, size_t size, size_t *off) {
  /* The arena must stay addressable: refuse sizes whose total would pass half the address space. */
  if (size > SIZE_MAX / 2 - GRANULE || a->high_water > SIZE_MAX / 2 - GRANULE - size) return 1;
  size = round_up(size ? size : 1);
  int best = -1;
  for (int i = 0; i < a->n_free; i++)
    if (a->free_list[i].size >= size && (best < 0 || a->free_list[i].size < a->free_list[best].size))
      best = i;
  if (best >= 0) {
    wt_arena_block *b = &a->free_list[best];
    *off = b->off;
    b->off += size;
    b->size -= size;
    if (b->size == 0) remove_at(a, best);
    return 0;
  }
  /* Grow at the end, reusing a free block that touches the end. */
  if (a->n_free && a->free_list[a->n_free - 1].off + a->free_list[a->n_free - 1].size == a->high_water) {
    wt_arena_block *b = &a->free_list[a->n_free - 1];
    *off = b->off;
    a->high_water = b->off + size;
    remove_at(a, a->n_free - 1);
    return 0;
  }
  *off = a->high_water;
  a->high_water += size;
  return 0;
}

void wt_arena_alloc_give(wt_arena_alloc *a, size_t off, size_t size) {
  size = round_up(size ? size : 1);
  int i = 0;
  while (i < a->n_free && a->free_list[i].off < off) i++;
  /* merge with the previous and/or next block */
  int merged = 0;
  if (i > 0 && a->free_list[i - 1].off + a->free_list[i - 1].size == off) {
    a->free_list[i - 1].size += size;
    merged = 1;
    if (i < a->n_free && a->free_list[i - 1].off + a->free_list[i - 1].size == a->free_list[i].off) {
      a->free_list[i - 1].size += a->free_list[i].size;
      remove_at(a, i);
    }
  } else if (i < a->n_free && off + size == a->free_list[i].off) {
    a->free_list[i].off = off;
    a->free_list[i].size += size;
    merged = 1;
  }
  if (merged) return;
  if (a->n_free == a->cap_free) {
    int nc = a->cap_free ? a->cap_free * 2 : 32;
    wt_arena_block *nb = realloc(a->free_list, sizeof *nb * (size_t)nc);
    if (!nb) return; /* losing a free block only costs arena space */
    a->free_list = nb;
    a->cap_free = nc;
  }
  memmove(&a->free_list[i + 1], &a->free_list[i], sizeof *a->free_list * (size_t)(a->n_free - i));
  a->free_list[i].off = off;
  a->free_list[i].size = size;
  a->n_free++;
}
