/* Plan compaction: a built plan keeps 8 bytes per value (wt_pval: offset or pointer, and where
 * its shape is in a packed table of the distinct ones), the steps, one block of op params
 * (wt_pl_gather_params) and one of the folded constants a run reads (wt_pl_compact_values),
 * all moved down into the room the build freed (wt_pl_settle). */
#include <stdlib.h>

#include "runtime/plan_internal.h"

static uint32_t bytes_hash(const void *b, size_t n) {
  uint32_t h = 2166136261u ^ (uint32_t)n;
  for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)b)[i]) * 16777619u;
  return h;
}

/* Moves every step's params into one block (no allocation per step in a kept plan); steps with
 * the same params (a forward and a backward MatMul of one shape, Transposes, Identities ...)
 * share one copy: run only reads them. */
void wt_pl_gather_params(wt_plan *p) {
  int ns = p->sp.n_steps;
  wt_step *steps = plan_steps(p);
  size_t cap = 16;
  while (cap < 2 * (size_t)ns) cap *= 2;
  int *first = malloc(sizeof(int) * cap);  /* hash slot -> the step holding those params, -1 */
  int *same = malloc(sizeof(int) * (size_t)(ns + 1)); /* step -> earlier step with equal params, or itself */
  if (!first || !same) goto out;
  for (size_t i = 0; i < cap; i++) first[i] = -1;
  size_t total = 0;
  for (int s = 0; s < ns; s++) {
    const wt_step *st = &steps[s];
    same[s] = s;
    if (!st->s.params_bytes) continue;
    size_t i = bytes_hash(st->s.params, st->s.params_bytes) & (cap - 1);
    for (; first[i] >= 0; i = (i + 1) & (cap - 1)) {
      const wt_step *o = &steps[first[i]];
      if (o->s.params_bytes == st->s.params_bytes && !memcmp(o->s.params, st->s.params, st->s.params_bytes)) break;
    }
    if (first[i] >= 0) {
      same[s] = first[i];
    } else {
      first[i] = s;
      total += (st->s.params_bytes + 15) / 16 * 16;
    }
  }
  unsigned char *block = total ? aligned_alloc(16, total) : NULL;
  if (!block) goto out; /* nothing to gather, or no memory: the steps keep their own */
  size_t at = 0;
  for (int s = 0; s < ns; s++) {
    wt_step *st = &steps[s];
    if (!st->s.params_bytes) continue;
    void *own = st->s.params;
    if (same[s] == s) {
      memcpy(block + at, own, st->s.params_bytes);
      st->s.params = block + at;
      at += (st->s.params_bytes + 15) / 16 * 16;
    } else {
      st->s.params = steps[same[s]].s.params; /* already in the block */
    }
    free(own);
  }
  p->sp.params_block = block;
out:
  free(first);
  free(same);
}

/* Once built, a plan keeps per value only an index into a table of the distinct (dtype, shape)s
 * and where its bytes are (an arena offset, or a pointer); the folded constants a run reads move
 * into one block and those only folding read are dropped (their shapes stay). A kept plan then
 * costs a few bytes per value instead of a full description. */
int wt_pl_compact_values(wt_plan *p) {
  const wt_graph *g = p->sp.g;
  int nv = g->n_values, rc = WT_OK;
  uint32_t cap = 16;
  while (cap < 2u * (uint32_t)nv) cap *= 2;
  uint32_t *slot = calloc(cap, sizeof *slot); /* type index + 1, 0 = empty */
  uint8_t *read = wt_pl_value_readers(p);           /* read by a step or the caller */
  uint32_t n_types = 0, types_cap = 16;        /* grown: distinct types are few */
  wt_tensor *types = malloc(sizeof *types * types_cap);
  p->pv = calloc((size_t)nv + 1, sizeof *p->pv);
  if (!slot || !read || !types || !p->pv) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  for (int v = 0; v < nv; v++) {
    if (p->sp.storage[v] == WT_ST_NONE) continue;
    wt_tensor t; /* zeroed whole, padding too: hashed and compared as bytes */
    memset(&t, 0, sizeof t);
    t.dtype = p->sp.vals[v].dtype;
    t.rank = p->sp.vals[v].rank;
    memcpy(t.dims, p->sp.vals[v].dims, sizeof *t.dims * (size_t)t.rank);
    uint32_t i = bytes_hash(&t, sizeof t) & (cap - 1);
    while (slot[i] && memcmp(&types[slot[i] - 1], &t, sizeof t) != 0) i = (i + 1) & (cap - 1);
    if (!slot[i]) {
      if (n_types == types_cap) {
        wt_tensor *more = realloc(types, sizeof *types * (types_cap *= 2));
        if (!more) {
          rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
          goto out;
        }
        types = more;
      }
      types[n_types] = t;
      slot[i] = ++n_types;
    }
    p->pv[v].type = slot[i] - 1;
  }
  size_t static_bytes = 0;
  int any_static = 0;
  for (int v = 0; v < nv; v++)
    if (p->sp.storage[v] == WT_ST_STATIC && read[v]) {
      static_bytes += (wt_nbytes(&p->sp.vals[v]) + 15) / 16 * 16;
      any_static = 1;
    }
  /* empty constants get an address too (at least 16 bytes) */
  if (any_static && !(p->static_block = aligned_alloc(16, static_bytes ? static_bytes : 16))) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  size_t at = 0;
  for (int v = 0; v < nv; v++) {
    switch (p->sp.storage[v]) {
      case WT_ST_ARENA: /* wt_pl_assign_arena sets the offset */
        break;
      case WT_ST_STATIC:
        if (read[v]) {
          size_t nb = wt_nbytes(&p->sp.vals[v]);
          p->pv[v].at.ptr = (uint8_t *)p->static_block + at;
          if (nb) memcpy(p->pv[v].at.ptr, p->sp.vals[v].data, nb);
          at += (nb + 15) / 16 * 16;
        }
        break;
      case WT_ST_INIT:
        p->pv[v].at.ptr = p->sp.vals[v].data;
        break;
      default:
        break;
    }
  }
  for (int i = 0; i < p->sp.n_statics; i++) free(p->sp.statics[i]);
  free(p->sp.statics);
  p->sp.statics = NULL;
  p->sp.n_statics = 0;
  free(p->sp.vals);
  p->sp.vals = NULL;
  /* packed, and allocated after the build's big arrays are freed, so that they take their room */
  size_t words = 0;
  for (uint32_t t = 0; t < n_types; t++) words += 1 + (size_t)types[t].rank;
  uint32_t *at_word = malloc(sizeof *at_word * (n_types ? n_types : 1));
  p->types = malloc(sizeof *p->types * (words ? words : 1));
  p->outs = calloc((size_t)g->n_outputs + 1, sizeof *p->outs);
  if (!at_word || !p->types || !p->outs || words > UINT32_MAX) {
    free(at_word);
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  words = 0;
  for (uint32_t t = 0; t < n_types; t++) {
    at_word[t] = (uint32_t)words;
    int32_t head[2] = {types[t].dtype, types[t].rank};
    memcpy(&p->types[words], head, sizeof head);
    memcpy(&p->types[words + 1], types[t].dims, sizeof *types[t].dims * (size_t)types[t].rank);
    words += 1 + (size_t)types[t].rank;
  }
  for (int v = 0; v < nv; v++)
    if (p->sp.storage[v] != WT_ST_NONE) p->pv[v].type = at_word[p->pv[v].type];
  free(at_word);
  for (int k = 0; k < g->n_outputs; k++) type_of(p, g->outputs[k], &p->outs[k]);
out:
  free(types);
  free(slot);
  free(read);
  return rc;
}

/* The piece p (n bytes) moved to a lower address when malloc has room there, else p. */
static void *lower(void *p, size_t n, size_t align) {
  if (!p || !n) return p;
  void *q = align > 8 ? aligned_alloc(align, (n + align - 1) / align * align) : malloc(n);
  if (!q) return p;
  if ((uintptr_t)q > (uintptr_t)p) {
    free(q);
    return p;
  }
  memcpy(q, p, n);
  free(p);
  return q;
}

static int in_block(const void *x, const void *block, size_t bytes) {
  return block && (uintptr_t)x >= (uintptr_t)block && (uintptr_t)x - (uintptr_t)block < bytes;
}

/* Building frees big temporaries (vals) below pieces the plan keeps; those move down into the
 * room, so that the kept plan sits low and the arena, allocated next, can start where the
 * temporaries were (a hole under the arena would stay for the module's life). */
void wt_pl_settle(wt_plan *p) {
  const wt_graph *g = p->sp.g;
  int nv = g->n_values;
  size_t params_bytes = 0, static_bytes = 0;
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_step *st = &plan_steps(p)[s];
    if (in_block(st->s.params, p->sp.params_block, SIZE_MAX)) {
      size_t end = (uintptr_t)st->s.params - (uintptr_t)p->sp.params_block + (st->s.params_bytes + 15) / 16 * 16;
      if (end > params_bytes) params_bytes = end;
    }
  }
  for (int v = 0; v < nv; v++)
    if (p->sp.storage[v] == WT_ST_STATIC && p->pv[v].at.ptr && in_block(p->pv[v].at.ptr, p->static_block, SIZE_MAX)) {
      wt_tensor t;
      type_of(p, v, &t);
      size_t end = (uintptr_t)p->pv[v].at.ptr - (uintptr_t)p->static_block + (wt_nbytes(&t) + 15) / 16 * 16;
      if (end > static_bytes) static_bytes = end;
    }
  p->sp.steps = lower(p->sp.steps, sizeof(wt_step) * (size_t)p->sp.n_steps, 8);
  wt_step *steps = plan_steps(p);
  void *old = p->sp.params_block;
  p->sp.params_block = lower(old, params_bytes, 16);
  for (int s = 0; s < p->sp.n_steps && p->sp.params_block != old; s++)
    if (in_block(steps[s].s.params, old, params_bytes))
      steps[s].s.params = (uint8_t *)p->sp.params_block + ((uintptr_t)steps[s].s.params - (uintptr_t)old);
  old = p->static_block;
  p->static_block = lower(old, static_bytes, 16);
  for (int v = 0; v < nv && p->static_block != old; v++)
    if (p->sp.storage[v] == WT_ST_STATIC && in_block(p->pv[v].at.ptr, old, static_bytes))
      p->pv[v].at.ptr = (uint8_t *)p->static_block + ((uintptr_t)p->pv[v].at.ptr - (uintptr_t)old);
  p->pv = lower(p->pv, sizeof *p->pv * (size_t)nv, 8);
  p->sp.storage = lower(p->sp.storage, (size_t)nv, 1);
  p->sp.keyed = lower(p->sp.keyed, (size_t)g->n_inputs, 1);
  p->alias = lower(p->alias, sizeof(int) * 2 * (size_t)p->n_alias, 4);
  p->io = lower(p->io, sizeof *p->io * (size_t)(most_io(p) + 1), 8);
}
