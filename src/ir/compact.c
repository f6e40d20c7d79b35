/* Packing a loaded graph (wt_graph_shrink): every string (each distinct one once: op types,
 * domains and attribute names repeat across nodes) and the small arrays of values (dims, dim
 * names), nodes (inputs and outputs) and attributes move into one block, and the value and node
 * arrays are copied to their exact size. The block is allocated after the loader's temporaries
 * are freed, so a kept graph sits low and in one piece instead of interleaved with holes. The
 * pieces in the block are never freed one by one (wt_graph_release); a change to the graph after
 * packing allocates as before. Initializer bytes and tensor attributes stay where they are. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* One walk, run twice: sizing (base NULL) then copying. Strings are interned: the sizing pass
 * gives each distinct one its offset in the strings region. */
typedef struct packer {
  uint8_t *base;          /* the block, or NULL while sizing */
  size_t fixed;           /* bytes of the arrays region (strings follow it) */
  size_t at;              /* cursor in the arrays region */
  size_t str_bytes;
  const char **keys;      /* interning table (open addressing) */
  size_t *offs;
  size_t cap;
} packer;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
  return h;
}

/* The string's place in the block (sizing: reserves it once). */
static char *pack_str(packer *pk, const char *s) {
  if (!s) return NULL;
  size_t i = str_hash(s) & (pk->cap - 1);
  while (pk->keys[i] && strcmp(pk->keys[i], s) != 0) i = (i + 1) & (pk->cap - 1);
  if (!pk->keys[i]) {
    pk->keys[i] = s;
    pk->offs[i] = pk->str_bytes;
    pk->str_bytes += strlen(s) + 1;
  }
  if (!pk->base) return NULL;
  char *dst = (char *)pk->base + pk->fixed + pk->offs[i];
  if (pk->keys[i] != dst) memcpy(dst, s, strlen(s) + 1);
  pk->keys[i] = dst; /* the original is freed once moved: look this one up from now on */
  return dst;
}

/* Room for n bytes (at least one, so that the piece lies inside the block), copied from src. */
static void *pack_bytes(packer *pk, const void *src, size_t n, size_t align) {
  pk->at = align_up(pk->at, align);
  void *dst = pk->base ? pk->base + pk->at : NULL;
  if (dst && src && n) memcpy(dst, src, n);
  pk->at += n ? n : 1;
  return dst;
}

/* Initializers up to this size move into the block (bigger ones, weights of inference models,
 * are not copied). */
#define PACK_DATA_MAX WT_PACK_DATA_MAX

/* Packs every piece; when copying, the graph's pointers move to the block (the old pieces are
 * handed to `old` to be freed). */
static void walk(packer *pk, wt_graph *g, const wt_graph *old) {
  int copy = pk->base != NULL;
#define MOVE(field, expr)                         \
  do {                                            \
    void *prev_ = (void *)(field), *next_ = expr; \
    if (copy) {                                   \
      (field) = next_;                            \
      wt_graph_release(old, prev_);               \
    }                                             \
  } while (0)
  MOVE(g->name, pack_str(pk, g->name));
  MOVE(g->producer_name, pack_str(pk, g->producer_name));
  MOVE(g->producer_version, pack_str(pk, g->producer_version));
  for (int i = 0; i < g->n_opsets; i++) MOVE(g->opsets[i].domain, pack_str(pk, g->opsets[i].domain));
  if (g->opsets) MOVE(g->opsets, pack_bytes(pk, g->opsets, sizeof *g->opsets * (size_t)g->n_opsets, sizeof(int64_t)));
  if (g->inputs) MOVE(g->inputs, pack_bytes(pk, g->inputs, sizeof(int) * (size_t)g->n_inputs, sizeof(int)));
  if (g->outputs) MOVE(g->outputs, pack_bytes(pk, g->outputs, sizeof(int) * (size_t)g->n_outputs, sizeof(int)));
  for (int i = 0; i < g->n_values; i++) {
    wt_value *v = &g->values[i];
    /* external data stays where it was read to (a deferred reader fills it after the parse; a
     * borrowed buffer is another graph's) */
    if (v->data && v->nbytes <= PACK_DATA_MAX && !(v->flags & (WT_VALUE_BORROWED | WT_VALUE_EXTERNAL))) MOVE(v->data, pack_bytes(pk, v->data, v->nbytes, 16));
    if (v->dim_param)
      for (int d = 0; d < v->rank; d++) MOVE(v->dim_param[d], pack_str(pk, v->dim_param[d]));
    if (v->dim_param) MOVE(v->dim_param, pack_bytes(pk, v->dim_param, sizeof(char *) * (size_t)v->rank, sizeof(char *)));
    if (v->dims) MOVE(v->dims, pack_bytes(pk, v->dims, sizeof(int64_t) * (size_t)v->rank, sizeof(int64_t)));
    MOVE(v->name, pack_str(pk, v->name));
  }
  for (int i = 0; i < g->n_nodes; i++) {
    wt_node *n = &g->nodes[i];
    MOVE(n->name, pack_str(pk, n->name));
    MOVE(n->op_type, pack_str(pk, n->op_type));
    MOVE(n->domain, pack_str(pk, n->domain));
    MOVE(n->inputs, pack_bytes(pk, n->inputs, sizeof(int) * (size_t)n->n_inputs, sizeof(int)));
    MOVE(n->outputs, pack_bytes(pk, n->outputs, sizeof(int) * (size_t)n->n_outputs, sizeof(int)));
    for (int k = 0; k < n->n_attrs; k++) {
      wt_attr *a = &n->attrs[k];
      MOVE(a->name, pack_str(pk, a->name));
      if (a->type == WT_ATTR_STRING && a->s) /* may hold NULs: not interned */
        MOVE(a->s, pack_bytes(pk, a->s, a->s_len + 1, 1));
      if (a->type == WT_ATTR_INTS && a->ints)
        MOVE(a->ints, pack_bytes(pk, a->ints, sizeof(int64_t) * (size_t)a->n, sizeof(int64_t)));
      if (a->type == WT_ATTR_FLOATS && a->floats)
        MOVE(a->floats, pack_bytes(pk, a->floats, sizeof(float) * (size_t)a->n, sizeof(float)));
      if (a->type == WT_ATTR_STRINGS && a->strings) {
        for (int j = 0; j < a->n; j++) MOVE(a->strings[j], pack_str(pk, a->strings[j]));
        MOVE(a->strings, pack_bytes(pk, a->strings, sizeof(char *) * (size_t)a->n, sizeof(char *)));
      }
      if (a->type == WT_ATTR_TENSOR && a->t && wt_nbytes(&a->t->t) <= PACK_DATA_MAX) { /* Constant nodes' tensors */
        wt_const_tensor *t = a->t;
        if (t->t.data) MOVE(t->t.data, pack_bytes(pk, t->t.data, wt_nbytes(&t->t), 16));
        MOVE(t->name, pack_str(pk, t->name));
        MOVE(a->t, pack_bytes(pk, t, sizeof *t, sizeof(int64_t)));
      }
    }
    if (n->attrs) MOVE(n->attrs, pack_bytes(pk, n->attrs, sizeof(wt_attr) * (size_t)n->n_attrs, sizeof(int64_t)));
  }
#undef MOVE
}

/* The array copied to its exact size at a fresh address (taking the room the loader freed). */
static void *refit(void *arr, size_t bytes) {
  if (!arr || !bytes) return arr;
  void *fresh = malloc(bytes);
  if (!fresh) return arr;
  memcpy(fresh, arr, bytes);
  free(arr);
  return fresh;
}

void wt_graph_shrink(wt_graph *g) {
  g->values = refit(g->values, sizeof *g->values * (size_t)g->n_values);
  if (g->n_values) g->cap_values = g->n_values;
  g->nodes = refit(g->nodes, sizeof *g->nodes * (size_t)g->n_nodes);
  if (g->n_nodes) g->cap_nodes = g->n_nodes;
  size_t n_strings = 16;
  for (int i = 0; i < g->n_values; i++) n_strings += 1 + (g->values[i].dim_param ? (size_t)g->values[i].rank : 0);
  for (int i = 0; i < g->n_nodes; i++) {
    n_strings += 3;
    for (int k = 0; k < g->nodes[i].n_attrs; k++)
      n_strings += 2 + (g->nodes[i].attrs[k].type == WT_ATTR_STRINGS ? (size_t)g->nodes[i].attrs[k].n : 0);
  }
  packer pk = {.cap = 16};
  while (pk.cap < 2 * n_strings) pk.cap *= 2;
  pk.keys = calloc(pk.cap, sizeof *pk.keys);
  pk.offs = malloc(sizeof *pk.offs * pk.cap);
  if (pk.keys && pk.offs) {
    walk(&pk, g, g); /* sizing */
    pk.fixed = align_up(pk.at, sizeof(int64_t));
    size_t total = pk.fixed + pk.str_bytes;
    uint8_t *block = aligned_alloc(16, (total + 15) / 16 * 16);
    if (block) {
      /* the old pieces are released against the old graph state (its old slab) */
      wt_graph old = *g;
      pk.base = block;
      pk.at = 0;
      walk(&pk, g, &old);
      free(old.slab);
      g->slab = block;
      g->slab_bytes = total;
    }
  }
  free(pk.keys);
  free(pk.offs);
}
