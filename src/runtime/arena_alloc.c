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
  uint64_t key;                  /* placed in decreasing key order */
  size_t size;
  int first, index;
} sort_key;

static int by_key(const void *a, const void *b) {
  const sort_key *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->index - y->index;
}

/* The orders tried: largest first (the classic greedy-by-size), largest size x lifetime first,
 * longest-lived first. Each wins on some graphs (a CNN's long-lived saved activations beside
 * short-lived gradients favour the last two); the packing keeps the best. */
enum { ORDER_SIZE, ORDER_AREA, ORDER_LIFE, N_ORDERS };

static uint64_t order_key(const wt_arena_item *it, int order) {
  uint64_t life = (uint64_t)(it->last - it->first + 1);
  switch (order) {
    case ORDER_AREA: return (uint64_t)(it->size / GRANULE) * life;
    case ORDER_LIFE: return life;
    default: return it->size;
  }
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

/* The most bytes live at one step: no layout can go below it. */
static size_t live_peak(const wt_arena_item *items, int n) {
  size_t peak = 0;
  for (int i = 0; i < n; i++) {
    size_t live = 0;
    for (int j = 0; j < n; j++)
      if (items[j].first <= items[i].first && items[j].last >= items[i].first) live += items[j].size;
    if (live > peak) peak = live;
  }
  return peak;
}

/* Greedy placement is order-sensitive: lifetimes that interlock (a CNN's saved activations
 * beside short-lived gradients) leave gaps none of the sorted orders close. A short local
 * search swaps a few items of the best order and keeps any order that packs tighter, until
 * the live peak is reached or a fixed budget of work is spent (deterministic: fixed seed). */
static size_t search(wt_arena_item *items, int n, size_t best, sort_key *best_order,
                     sort_key *order, size_t *off, int *placed) {
  size_t floor = live_peak(items, n);
  double per_try = (double)n * (double)n;
  int tries = per_try > 0 ? (int)(2e7 / per_try) : 0;
  if (tries > 256) tries = 256;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int t = 0; t < tries && best > floor && n > 1; t++) {
    memcpy(order, best_order, sizeof *order * (size_t)n);
    for (int k = 0, swaps = 1 + t % 4; k < swaps; k++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      int a = (int)(rng % (uint64_t)n), b = (int)((rng >> 32) % (uint64_t)n);
      sort_key tmp = order[a];
      order[a] = order[b];
      order[b] = tmp;
    }
    size_t high = place(items, order, n, off, placed);
    if (high < best) {
      best = high;
      for (int i = 0; i < n; i++) items[i].off = off[i];
      memcpy(best_order, order, sizeof *order * (size_t)n);
    }
  }
  return best;
}

int wt_arena_pack(wt_arena_item *items, int n, size_t *high_water) {
  *high_water = 0;
  if (n <= 0) return 0;
  sort_key *order = malloc(sizeof *order * (size_t)n);
  int *placed = malloc(sizeof(int) * (size_t)n); /* placed items by offset */
  size_t *off = malloc(sizeof(size_t) * (size_t)n);
  sort_key *best_order = malloc(sizeof *best_order * (size_t)n);
  int rc = !order || !placed || !off || !best_order;
  for (int i = 0; !rc && i < n; i++) {
    if (items[i].size > SIZE_MAX / 2 - GRANULE || items[i].last < items[i].first) {
      rc = 1;
      break;
    }
    items[i].size = round_up(items[i].size ? items[i].size : 1);
  }
  size_t best = SIZE_MAX;
  for (int o = 0; !rc && o < N_ORDERS; o++) {
    for (int i = 0; i < n; i++) order[i] = (sort_key){order_key(&items[i], o), items[i].size, items[i].first, i};
    qsort(order, (size_t)n, sizeof *order, by_key);
    size_t high = place(items, order, n, off, placed);
    if (high < best) {
      best = high;
      for (int i = 0; i < n; i++) items[i].off = off[i];
      memcpy(best_order, order, sizeof *order * (size_t)n);
    }
  }
  if (!rc && best != SIZE_MAX) best = search(items, n, best, best_order, order, off, placed);
  if (!rc && best == SIZE_MAX) rc = 1;
  free(order);
  free(best_order);
  free(placed);
  free(off);
  if (!rc) *high_water = best;
  return rc;
}
