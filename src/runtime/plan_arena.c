/* Arena layout (see wt_plan_bind_arena): every arena value and scratch gets an offset fixed at
 * plan time. A value lives from the step that writes it to its last reader; views and in-place
 * outputs share their root's buffer; a dead value's room is reused. Two layouts are tried (step
 * order, then offline greedy-by-size) and the smaller kept. */
#include <stdint.h>
#include <stdlib.h>

#include "runtime/arena_alloc.h"
#include "runtime/plan_internal.h"

static size_t value_bytes(const wt_plan *p, int v) {
  wt_tensor t;
  type_of(p, v, &t);
  return wt_nbytes(&t);
}

static int find_root(const int *root, int v) {
  while (root[v] != v) v = root[v];
  return v;
}

/* A WT_OP_INPLACE step whose input dies there writes output 0 into that input's buffer: the
 * output joins the input's root (like a view) and extends its life. Steps are taken in order,
 * so a chain of such steps (Add, Relu, ReluGrad ...) shares one buffer. */
static void write_in_place(wt_plan *p, int s, int *root, int *last) {
  const wt_step *st = &plan_steps(p)[s];
  int v = st->s.n_out > 0 ? st->s.node->outputs[0] : -1;
  if (!(st->s.op->flags & WT_OP_INPLACE) || v < 0 || root[v] != v || p->sp.storage[v] != WT_ST_ARENA)
    return;
  wt_tensor out_t, in_t, *out = &out_t, *in = &in_t;
  type_of(p, v, out);
  for (int i = 0; i < st->s.n_in; i++) {
    int u = st->s.node->inputs[i];
    if (u < 0) continue;
    int r = find_root(root, u);
    type_of(p, u, in);
    if (p->sp.storage[r] != WT_ST_ARENA || last[r] != s || in->dtype != out->dtype ||
        !wt_same_shape(in, out) || value_bytes(p, r) != wt_nbytes(out))
      continue;
    root[v] = r;
    last[r] = last[v] > s ? last[v] : s;
    return;
  }
}

/* Assigns arena offsets: a value lives from the step that writes it to its last reader (graph
 * outputs to the end); views extend their root's life. Scratch lives for its step only. */
int wt_pl_assign_arena(wt_plan *p) {
  const wt_graph *g = p->sp.g;
  int nv = g->n_values, ns = p->sp.n_steps;
  wt_step *steps = plan_steps(p);
  int rc = WT_OK;
  int *root = malloc(sizeof(int) * (size_t)(nv + 1));
  int *last = malloc(sizeof(int) * (size_t)(nv + 1));
  size_t *off = calloc((size_t)nv + 1, sizeof(size_t));
  /* every buffer's lifetime, for the offline layout (wt_arena_pack) tried after this one */
  wt_arena_item *items = malloc(sizeof *items * (size_t)(nv + ns + 1));
  int *item_key = malloc(sizeof(int) * (size_t)(nv + ns + 1)); /* value, or -1 - step (scratch) */
  int n_items = 0;
  wt_arena_alloc aa;
  wt_arena_alloc_init(&aa);
  if (!root || !last || !off || !items || !item_key) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory planning");
    goto out;
  }
  for (int v = 0; v < nv; v++) {
    root[v] = v;
    last[v] = -1;
  }
  for (int s = 0; s < ns; s++) {
    const wt_step *st = &steps[s];
    if (st->s.view) root[st->s.node->outputs[0]] = root[st->s.node->inputs[0]];
    for (int i = 0; i < st->s.n_in; i++) {
      int v = st->s.node->inputs[i];
      if (v >= 0) last[root[v]] = s;
    }
  }
  for (int k = 0; k < g->n_outputs; k++) last[root[g->outputs[k]]] = ns;
  for (int s = 0; s < ns; s++) write_in_place(p, s, root, last);
  for (int v = 0; v < nv; v++) root[v] = find_root(root, v);
  for (int s = 0; s < ns; s++) {
    wt_step *st = &steps[s];
    for (int i = 0; i < st->s.n_out; i++) {
      int v = st->s.node->outputs[i];
      if (v < 0 || root[v] != v || p->sp.storage[v] == ST_ALIAS) continue;
      size_t nb = value_bytes(p, v);
      if (last[v] < 0) last[v] = s; /* unused output: still written by the kernel */
      if (wt_arena_alloc_take(&aa, nb, &off[v])) {
        uint64_t need = (uint64_t)aa.high_water + nb;
        rc = wt_errorf(WT_ERR_NO_MEMORY, "the activations at these input shapes need more than %llu "
                       "bytes (%llu MiB, at value '%s' of %zu bytes): more than this build can address "
                       "for them (%llu MiB); what would help: a smaller batch or input",
                       (unsigned long long)need, (unsigned long long)(need >> 20), g->values[v].name, nb,
                       (unsigned long long)((uint64_t)(SIZE_MAX / 2) >> 20));
        goto out;
      }
      items[n_items] = (wt_arena_item){.size = nb, .first = s, .last = last[v]};
      item_key[n_items++] = v;
    }
    if (st->s.scratch_bytes && wt_arena_alloc_take(&aa, st->s.scratch_bytes, &st->scratch_off)) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory: %s needs %zu bytes of scratch at these input "
                     "shapes, more than this build can address; use a smaller batch",
                     wt_node_label(st->s.node), st->s.scratch_bytes);
      goto out;
    }
    if (st->s.scratch_bytes) {
      wt_arena_alloc_give(&aa, st->scratch_off, st->s.scratch_bytes);
      items[n_items] = (wt_arena_item){.size = st->s.scratch_bytes, .first = s, .last = s};
      item_key[n_items++] = -1 - s;
    }
    /* Free what dies here: inputs read for the last time, and outputs nobody reads. */
    for (int i = 0; i < st->s.n_in; i++) {
      int v = st->s.node->inputs[i];
      if (v < 0) continue;
      int r = root[v];
      if (last[r] == s && p->sp.storage[r] == WT_ST_ARENA) {
        wt_arena_alloc_give(&aa, off[r], value_bytes(p, r));
        last[r] = -2; /* given back once */
      }
    }
    for (int i = 0; i < st->s.n_out; i++) {
      int v = st->s.node->outputs[i];
      if (v >= 0 && root[v] == v && last[v] == s && p->sp.storage[v] == WT_ST_ARENA) {
        wt_arena_alloc_give(&aa, off[v], value_bytes(p, v));
        last[v] = -2;
      }
    }
  }
  /* The plan does not own its arena: the session binds one (shared by its plans, and by the
   * training and eval sessions of a module) before each run, see wt_plan_bind_arena. */
  p->arena_bytes = aa.high_water;
  p->live_peak = aa.peak_in_use;
  /* The step-order layout above leaves holes (a big value freed early, then smaller ones); the
   * offline greedy-by-size layout usually packs tighter: keep whichever is smaller. */
  size_t packed;
  if (wt_arena_pack(items, n_items, &packed) == 0 && packed < p->arena_bytes) {
    for (int i = 0; i < n_items; i++) {
      if (item_key[i] >= 0) off[item_key[i]] = items[i].off;
      else steps[-1 - item_key[i]].scratch_off = items[i].off;
    }
    p->arena_bytes = packed;
  }
  /* The session allocates the arena at run time; a layout no machine this targets could hold
   * (natively 1 TiB; wasm32 stops at half its address space above) fails here, at plan time. */
  if ((uint64_t)p->arena_bytes > ((uint64_t)1 << 40)) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory: the plan needs an arena of %zu bytes (%zu MiB) "
                   "for the activations at these input shapes; use a smaller batch", p->arena_bytes,
                   p->arena_bytes >> 20);
    goto out;
  }
  for (int v = 0; v < nv; v++) /* outputs written in place share their root's offset */
    if (p->sp.storage[v] == WT_ST_ARENA) p->pv[v].at.off = off[root[v]];
out:
  wt_arena_alloc_release(&aa);
  free(root);
  free(last);
  free(off);
  free(items);
  free(item_key);
  return rc;
}
