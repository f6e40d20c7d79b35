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
  a->in_use += size;
  if (a->in_use > a->peak_in_use) a->peak_in_use = a->in_use;
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
  a->in_use -= size < a->in_use ? size : a->in_use;
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

typedef struct sort_key {
  size_t size;
  int first, index;
} sort_key;

static int by_size(const void *a, const void *b) {
  const sort_key *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->index - y->index;
}

/* Places items in `order`, each in the tightest gap beside the placed items it overlaps in
 * time; offsets into off[], returns the high-water mark (SIZE_MAX when out of range). */
static size_t place(const wt_arena_item *items, const sort_key *order, int n, size_t *off, int *placed) {
  int n_placed = 0;
  size_t high = 0;
  for (int k = 0; k < n; k++) {
    const wt_arena_item *it = &items[order[k].index];
    size_t end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (int j = 0; j < n_placed; j++) {
      const wt_arena_item *o = &items[placed[j]];
      if (o->last < it->first || o->first > it->last) continue; /* never live together */
      size_t at = off[placed[j]];
      if (at > end && at - end >= it->size && at - end < best_gap) {
        best = end;
        best_gap = at - end;
      }
      if (at + o->size > end) end = at + o->size;
    }
    if (best == SIZE_MAX) best = end;
    if (best > SIZE_MAX / 2 - it->size) return SIZE_MAX;
    off[order[k].index] = best;
    if (best + it->size > high) high = best + it->size;
    int at = n_placed;
    while (at > 0 && off[placed[at - 1]] > best) at--;
    memmove(&placed[at + 1], &placed[at], sizeof *placed * (size_t)(n_placed - at));
    placed[at] = order[k].index;
    n_placed++;
  }
  return high;
}

int wt_arena_pack(wt_arena_item *items, int n, size_t *high_water) {
  *high_water = 0;
  if (n <= 0) return 0;
  sort_key *order = malloc(sizeof *order * (size_t)n);
  int *placed = malloc(sizeof(int) * (size_t)n); /* placed items by offset */
  size_t *off = malloc(sizeof(size_t) * (size_t)n);
  int rc = !order || !placed || !off;
  for (int i = 0; !rc && i < n; i++) {
    if (items[i].size > SIZE_MAX / 2 - GRANULE || items[i].last < items[i].first) {
      rc = 1;
      break;
    }
    items[i].size = round_up(items[i].size ? items[i].size : 1);
    order[i] = (sort_key){items[i].size, items[i].first, i};
  }
  size_t best = SIZE_MAX;
  if (!rc) {
    qsort(order, (size_t)n, sizeof *order, by_size);
    best = place(items, order, n, off, placed);
    for (int i = 0; best != SIZE_MAX && i < n; i++) items[i].off = off[i];
  }
  if (!rc && best == SIZE_MAX) rc = 1;
  free(order);
  free(placed);
  free(off);
  if (!rc) *high_water = best;
  return rc;
}
