/* Planner passes that let values share buffers across steps: a step absorbing the next one
 * (wt_pl_fuse_steps), transposes read in place by the steps after them (wt_pl_fold_transposes)
 * and gradients written straight into their accumulators (wt_pl_alias_accumulators). */
#include <stdlib.h>

#include "runtime/plan_internal.h"

/* The plan's fusions are on unless a test turned them off (wt_plan_set_fusion). */
static int fusion_on = 1;

void wt_plan_set_fusion(int on) { fusion_on = on; }

/* Lets a step take over the next one when its op can (wt_cpu_kernel.absorb: a Relu as a GEMM's
 * epilogue, a Transpose of a Gemm's output as the GEMM writing it transposed): the next step must
 * be the only reader of the step's single output, read it as its only input and write one value
 * of the same dtype and size (the same shape, or the transpose absorb checks). That step is then
 * skipped and its output is a view of the first's. Returns how many steps were absorbed. */
int wt_pl_fuse_steps(wt_plan *p) {
  int fused = 0;
  wt_step *steps = plan_steps(p);
  if (!fusion_on) return 0;
  uint8_t *readers = wt_pl_value_readers(p);
  if (!readers) return 0; /* an optimization only */
  for (int s = 0; s + 1 < p->sp.n_steps; s++) {
    wt_step *st = &steps[s], *nx = NULL;
    if (!st->s.kernel->absorb || st->s.n_out != 1 || !st->s.params_bytes || st->s.mark) continue;
    int v = st->s.node->outputs[0];
    if (v < 0 || p->sp.storage[v] != WT_ST_ARENA || readers[v] != 1) continue;
    for (int t = s + 1; t < p->sp.n_steps && !nx; t++)
      for (int i = 0; i < steps[t].s.n_in; i++)
        if (steps[t].s.node->inputs[i] == v) nx = &steps[t];
    if (!nx || nx->s.n_in != 1 || nx->s.n_out != 1 || nx->s.scratch_bytes || nx->s.out) continue;
    int w = nx->s.node->outputs[0];
    int same = wt_same_shape(&p->sp.vals[w], &p->sp.vals[v]) ||
               ((nx->s.op->flags & WT_OP_TRANSPOSE) && wt_numel(&p->sp.vals[w]) == wt_numel(&p->sp.vals[v]));
    if (w < 0 || p->sp.storage[w] != WT_ST_ARENA || p->sp.vals[w].dtype != p->sp.vals[v].dtype ||
        !same || !st->s.kernel->absorb(st->s.params, nx->s.node))
      continue;
    nx->s.view = nx->s.mark = 1;
    p->sp.storage[w] = WT_ST_VIEW;
    fused++;
  }
  free(readers);
  return fused;
}

/* A Transpose swapping the last two axes (WT_OP_TRANSPOSE, perm [.., r-1, r-2]) read only by
 * steps that can read its input swapped instead (wt_cpu_kernel.read_swapped: a GEMM's trans flag;
 * the weights' W^T of exported Linear layers and attention's K^T) runs no more: its output
 * becomes a view of its input, which those steps read as its transpose. Not when the output is
 * a graph output (its bytes would be in the wrong order) or a reader refuses. Returns how many
 * Transposes were folded.
 * This is the one place MatMul(x, Transpose(W)) loses its Transpose: the models keep PyTorch's
 * form. Measured on the LoRA step of tests/data/tiny-decoder.onnx (the SmolLM2-shaped decoder,
 * 2 layers, rank 8 on q/k/v/o/gate/up/down) and a float16 [512, 512] base read through a Cast,
 * rewriting the models into Gemm(transB) on 2-D views at generation instead saves no byte more:
 * the backward pass reads 48704 bytes of saved values with this folding alone at [1, 16] (49216
 * with the rewrite), 248064 either way at [1, 64], 1581060 either way for the float16 base; the
 * same arena, live peak and step time. */
/* Asks (commit 0) or tells (commit 1) every step after s that reads w to read it swapped;
 * returns how many reads there were, or -1 when one cannot. */
static int swap_reads(wt_plan *p, int s, int w, int rank, int commit) {
  wt_step *steps = plan_steps(p);
  int reads = 0;
  for (int t = s + 1; t < p->sp.n_steps; t++)
    for (int i = 0; i < steps[t].s.n_in; i++) {
      if (steps[t].s.node->inputs[i] != w) continue;
      const wt_cpu_kernel *kn = steps[t].s.kernel;
      if (steps[t].s.mark || !kn->read_swapped || !kn->read_swapped(steps[t].s.params, i, rank, commit))
        return -1;
      reads++;
    }
  return reads;
}

int wt_pl_fold_transposes(wt_plan *p) {
  int folded = 0;
  wt_step *steps = plan_steps(p);
  if (!fusion_on) return 0;
  uint8_t *readers = wt_pl_value_readers(p);
  if (!readers) return 0; /* an optimization only */
  for (int s = 0; s < p->sp.n_steps; s++) {
    wt_step *st = &steps[s];
    if (!(st->s.op->flags & WT_OP_TRANSPOSE) || st->s.mark || st->s.n_in != 1 || st->s.n_out != 1)
      continue;
    int w = st->s.node->outputs[0], r = w >= 0 ? p->sp.vals[w].rank : 0;
    if (w < 0 || r < 2 || p->sp.storage[w] != WT_ST_ARENA) continue;
    const int *perm = st->s.params;
    int swap = perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
    for (int a = 0; a + 2 < r && swap; a++) swap = perm[a] == a;
    /* a graph output counts as two reads no step makes (wt_pl_value_readers) */
    if (!swap || swap_reads(p, s, w, r, 0) != readers[w]) continue;
    swap_reads(p, s, w, r, 1);
    st->s.view = st->s.mark = 1;
    p->sp.storage[w] = WT_ST_VIEW;
    folded++;
  }
  free(readers);
  return folded;
}

/* Gradient accumulation without temporaries. When its overwrite flag (lazy_reset_grad) is true,
 * InPlaceAccumulatorV2 sets its buffer (a graph input bound to the state's gradient memory) to
 * the gradient, so the step computing the gradient can write it straight into the buffer, and
 * the accumulator's copy vanishes (it skips buffer == value): parameter-sized temporaries leave
 * the arena. Only where the buffer and the gradient (and the views between) have no other
 * reader. The plan is then keyed on the flag: a step that accumulates (flag false) gets its own
 * plan, with the temporaries in the arena. An optimization only: skipped when out of memory. */
void wt_pl_alias_accumulators(wt_plan *p) {
  int nv = p->sp.g->n_values;
  const wt_step *steps = plan_steps(p);
  uint8_t *uses = wt_pl_value_readers(p);
  int *prod = malloc(sizeof(int) * (size_t)(nv + 1));
  int *pairs = malloc(sizeof(int) * 2 * (size_t)(p->sp.n_steps + 1));
  if (!uses || !prod || !pairs) goto out;
  for (int v = 0; v < nv; v++) prod[v] = -1;
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_node *n = steps[s].s.node;
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0) prod[n->outputs[o]] = s;
  }
  int n_pairs = 0;
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_node *n = steps[s].s.node;
    if (!(steps[s].s.op->flags & WT_OP_ACCUMULATOR) || n->n_inputs < 3) continue;
    int buf = n->inputs[0], v = n->inputs[1], flag = n->inputs[2];
    if (buf < 0 || v < 0 || flag < 0 || p->sp.storage[buf] != WT_ST_INPUT || uses[buf] != 1) continue;
    int ok = 1; /* back through the views (Identity, Reshape) to the step that writes the bytes */
    while (ok && p->sp.storage[v] == WT_ST_VIEW) {
      ok = uses[v] == 1 && prod[v] >= 0;
      if (ok) v = steps[prod[v]].s.node->inputs[0];
    }
    if (!ok || p->sp.storage[v] != WT_ST_ARENA || uses[v] != 1 || prod[v] < 0 || prod[v] >= s ||
        p->sp.vals[v].dtype != p->sp.vals[buf].dtype || wt_nbytes(&p->sp.vals[v]) != wt_nbytes(&p->sp.vals[buf]))
      continue;
    const wt_tensor *f = wt_shape_value(&p->sp, flag); /* keys the plan on the flag */
    if (!f || f->dtype != WT_BOOL || wt_numel(f) != 1 || !f->data || !*(const uint8_t *)f->data) continue;
    p->sp.storage[v] = ST_ALIAS;
    pairs[2 * n_pairs] = v;
    pairs[2 * n_pairs + 1] = buf;
    n_pairs++;
  }
  if (n_pairs) {
    p->alias = pairs;
    p->n_alias = n_pairs;
    pairs = NULL;
  }
out:
  free(uses);
  free(prod);
  free(pairs);
}
