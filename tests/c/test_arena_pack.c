/* Arena layout (runtime/arena_alloc): the offline packer (greedy orders + local search) never
 * overlaps two buffers that are live at the same step, and reaches the live peak where the
 * step-order allocator or greedy-by-size leaves a hole; the online allocator's live-bytes peak. */
#include <stdlib.h>

#include "check.h"
#include "runtime/arena_alloc.h"

static int overlap(const wt_arena_item *a, const wt_arena_item *b) {
  int in_time = !(a->last < b->first || b->last < a->first);
  int in_space = a->off < b->off + b->size && b->off < a->off + a->size;
  return in_time && in_space;
}

static void check_valid(const wt_arena_item *it, int n, size_t high) {
  for (int i = 0; i < n; i++) {
    CHECK(it[i].off % 64 == 0 && it[i].off + it[i].size <= high);
    for (int j = i + 1; j < n; j++) CHECK(!overlap(&it[i], &it[j]));
  }
}

int main(void) {
  /* A chain: each buffer lives two steps, so neighbours overlap and every other one can share. */
  wt_arena_item chain[6];
  for (int i = 0; i < 6; i++) chain[i] = (wt_arena_item){.size = 100, .first = i, .last = i + 1};
  size_t high;
  CHECK(wt_arena_pack(chain, 6, &high) == 0);
  check_valid(chain, 6, high);
  CHECK(high == 2 * 128); /* sizes round up to 64-byte granules */

  /* Step order: a small long-lived buffer lands above a short one, whose hole is then too small
   * for the next, bigger buffer: online 1024 + 64 + 2048, offline 2048 + 64. */
  wt_arena_item seq[3] = {
      {.size = 1024, .first = 0, .last = 1}, /* A */
      {.size = 64, .first = 1, .last = 4},   /* s: lives across everything after A */
      {.size = 2048, .first = 2, .last = 3}, /* B */
  };
  wt_arena_alloc aa;
  wt_arena_alloc_init(&aa);
  size_t off[3];
  CHECK(wt_arena_alloc_take(&aa, 1024, &off[0]) == 0);
  CHECK(wt_arena_alloc_take(&aa, 64, &off[1]) == 0);
  wt_arena_alloc_give(&aa, off[0], 1024);
  CHECK(wt_arena_alloc_take(&aa, 2048, &off[2]) == 0);
  CHECK(aa.peak_in_use == 2048 + 64);
  CHECK(aa.high_water == 1024 + 64 + 2048);
  wt_arena_alloc_release(&aa);
  CHECK(wt_arena_pack(seq, 3, &high) == 0);
  check_valid(seq, 3, high);
  CHECK(high == 2048 + 64);

  /* Random lifetimes: always a valid layout, never below the live peak. */
  srand(7);
  enum { N = 200 };
  wt_arena_item r[N];
  for (int i = 0; i < N; i++) {
    int a = rand() % 100, len = rand() % 20;
    r[i] = (wt_arena_item){.size = (size_t)(1 + rand() % 5000), .first = a, .last = a + len};
  }
  CHECK(wt_arena_pack(r, N, &high) == 0);
  check_valid(r, N, high);
  size_t peak = 0;
  for (int s = 0; s < 120; s++) {
    size_t live = 0;
    for (int i = 0; i < N; i++)
      if (r[i].first <= s && s <= r[i].last) live += r[i].size;
    if (live > peak) peak = live;
  }
  CHECK(high >= peak);

  /* The conformance CNN's training step: long-lived saved activations interlock with short
   * gradients so that every greedy order leaves a 200 KB hole; the search closes it (the live
   * peak is 3010560 bytes, at steps 17-20). */
  wt_arena_item cnn[] = {
      {802816, 0, 0, 22}, {28224, 0, 0, 0},    {802816, 0, 1, 21},  {200704, 0, 3, 19},
      {401408, 0, 3, 20}, {401408, 0, 4, 18},  {56448, 0, 4, 4},    {401408, 0, 17, 19},
      {200704, 0, 19, 20}, {56448, 0, 19, 19}, {802816, 0, 20, 22}, {802816, 0, 22, 23},
      {128576, 0, 23, 23}};
  int n_cnn = (int)(sizeof cnn / sizeof cnn[0]);
  CHECK(wt_arena_pack(cnn, n_cnn, &high) == 0);
  check_valid(cnn, n_cnn, high);
  CHECK(high == 3010560);

  CHECK(wt_arena_pack(NULL, 0, &high) == 0 && high == 0);
  wt_arena_item bad = {.size = 64, .first = 3, .last = 1};
  CHECK(wt_arena_pack(&bad, 1, &high) != 0);
  CHECK_DONE();
}
