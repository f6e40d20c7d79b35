/* Writes a checkpoint with external data of a given size (checkpoints over 2 GB),
 * for tests/bench/big-checkpoint.mjs to load and save again in Node:
 *   wt_big_checkpoint OUT.ckpt TENSORS MIB_PER_TENSOR
 * TENSORS frozen float tensors "p<i>" of MIB_PER_TENSOR MiB each (frozen: no gradient buffers
 * beside them once loaded), no optimizer state; the
 * float at index j of tensor i is pattern(i, j) (below, and in the .mjs). Writes OUT.ckpt (the
 * flatbuffer) and OUT.ckpt.data, one tensor at a time (one tensor's worth of memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/checkpoint.h"

static float pattern(int i, uint64_t j) { return (float)((j * 2654435761u + (uint64_t)i * 40503u) % 1000003u) * 1e-3f; }

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s OUT.ckpt TENSORS MIB_PER_TENSOR\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]);
  uint64_t elems = (uint64_t)atoll(argv[3]) * 1024 * 1024 / 4;
  if (n < 1 || n > 1000 || elems < 16) return 2;
  float *buf = malloc(elems * sizeof(float));
  wt_checkpoint c = {.version = 2, .n_frozen = n, .trainable = NULL};
  c.frozen = calloc((size_t)n, sizeof *c.frozen);
  char (*names)[16] = calloc((size_t)n, 16);
  if (!buf || !c.frozen || !names) return 1;
  for (int i = 0; i < n; i++) {
    snprintf(names[i], 16, "p%03d", i);
    c.frozen[i] = (wt_const_tensor){.name = names[i], .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {(int64_t)elems}, .data = buf}};
  }
  uint8_t *head;
  size_t head_len;
  wt_ckpt_segment *segs;
  int n_segs;
  uint64_t ext_len;
  if (wt_checkpoint_write_ext(&c, 0, &head, &head_len, &segs, &n_segs, &ext_len)) {
    fprintf(stderr, "%s\n", wt_error_message());
    return 1;
  }
  char side[4096];
  snprintf(side, sizeof side, "%s.data", argv[1]);
  FILE *h = fopen(argv[1], "wb"), *d = fopen(side, "wb");
  if (!h || !d || fwrite(head, 1, head_len, h) != head_len) return 1;
  uint64_t pos = 0;
  for (int s = 0; s < n_segs; s++) { /* names are p000..: the segment's tensor index */
    int i = atoi(segs[s].name + 1);
    for (uint64_t j = 0; j < elems; j++) buf[j] = pattern(i, j);
    for (; pos < segs[s].offset; pos++) fputc(0, d);
    if (fwrite(buf, 1, (size_t)segs[s].nbytes, d) != segs[s].nbytes) return 1;
    pos += segs[s].nbytes;
  }
  if (fclose(h) || fclose(d)) return 1;
  printf("%s: %zu bytes; %s: %llu bytes (%d tensors)\n", argv[1], head_len, side, (unsigned long long)ext_len, n_segs);
  free(head);
  free(segs);
  free(buf);
  free(names);
  free(c.frozen);
  return 0;
}
