/* Op family: einsum. Einsum (opset 12+: explicit and implicit outputs, ellipsis, diagonals,
 * size-1 broadcasting, any operand count) on float32 / int32 / int64. Two float operands whose
 * ids are each batch, kept or contracted run as a batched GEMM (wt_sgemm) after laying the
 * operands out as [batch, M, K] x [batch, K, N]; everything else runs the generic strided loop.
 * The gradient of each operand is itself an Einsum (dY with the other operands). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/einsum_params.h"

#define ELL 52 /* ids 0..51: 'A'..'Z', 'a'..'z' (ASCII order); 52+j: ellipsis dim j */

typedef struct es_term {
  int n;                    /* axes of the term after expanding "..." */
  int ids[WT_MAX_RANK];     /* global id per axis */
} es_term;

static int letter_id(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

/* Parses one term of `len` chars (spaces skipped) into letters with the ellipsis position:
 * ids[] gets letter ids and -1 for the ellipsis marker. Returns the count or -1. */
static int parse_term(const char *s, int len, int *ids, int cap, int *has_ell) {
  int n = 0;
  *has_ell = 0;
  for (int i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      if (*has_ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') return -1;
      *has_ell = 1;
      i += 2;
      if (n >= cap) return -1;
      ids[n++] = -1;
      continue;
    }
    int id = letter_id(s[i]);
    if (id < 0 || n >= cap) return -1;
    ids[n++] = id;
  }
  return n;
}

/* Expands a parsed term for a tensor of `rank` (ellipsis dims right-aligned to E). */
static int expand_term(const int *raw, int n_raw, int has_ell, int rank, int E, es_term *t,
                       int is_output) {
  int letters = n_raw - has_ell;
  int e = is_output ? E : rank - letters;
  if (!has_ell) e = 0;
  if (e < 0 || (!is_output && letters + e != rank)) return -1;
  t->n = 0;
  for (int i = 0; i < n_raw; i++) {
    if (raw[i] >= 0) {
      if (t->n >= WT_MAX_RANK) return -1;
      t->ids[t->n++] = raw[i];
    } else {
      for (int j = 0; j < e; j++) {
        if (t->n >= WT_MAX_RANK) return -1;
        t->ids[t->n++] = ELL + (E - e) + j;
      }
    }
  }
  return 0;
}

typedef struct es_parsed {
  int n_ops;
  int raw[WT_EINSUM_MAX_OPS + 1][WT_MAX_RANK + 1];
  int n_raw[WT_EINSUM_MAX_OPS + 1], has_ell[WT_EINSUM_MAX_OPS + 1];
  int explicit_out;
} es_parsed;

static int parse_equation(const char *eq, es_parsed *pe) {
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  pe->n_ops = 0;
  size_t start = 0;
  for (size_t i = 0; i <= lhs_len; i++) {
    if (i == lhs_len || eq[i] == ',') {
      if (pe->n_ops >= WT_EINSUM_MAX_OPS)
        return wt_errorf(WT_ERR_UNSUPPORTED, "more than %d operands", WT_EINSUM_MAX_OPS);
      int k = pe->n_ops++;
      pe->n_raw[k] = parse_term(eq + start, (int)(i - start), pe->raw[k], WT_MAX_RANK + 1,
                                &pe->has_ell[k]);
      if (pe->n_raw[k] < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "equation \"%s\": operand %d's term is malformed", eq, k);
      start = i + 1;
    }
  }
  pe->explicit_out = arrow != NULL;
  if (arrow) {
    int k = pe->n_ops;
    pe->n_raw[k] = parse_term(arrow + 2, (int)strlen(arrow + 2), pe->raw[k], WT_MAX_RANK + 1,
                              &pe->has_ell[k]);
    if (pe->n_raw[k] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "equation \"%s\": the output term is malformed", eq);
  }
  return WT_OK;
}

/* Resolves terms for the given input ranks: per-operand global ids and the output ids. */
static int resolve(const char *eq, const es_parsed *pe, const int *ranks, es_term *ops,
                   es_term *out, int *E_out) {
  int E = 0;
  for (int k = 0; k < pe->n_ops; k++) {
    int e = ranks[k] - (pe->n_raw[k] - pe->has_ell[k]);
    if (pe->has_ell[k] && e > E) E = e;
  }
  for (int k = 0; k < pe->n_ops; k++)
    if (expand_term(pe->raw[k], pe->n_raw[k], pe->has_ell[k], ranks[k], E, &ops[k], 0))
      return wt_errorf(WT_ERR_SHAPE, "equation \"%s\": operand %d has rank %d, which its term "
                       "does not match", eq, k, ranks[k]);
  if (pe->explicit_out) {
    int k = pe->n_ops;
    if (expand_term(pe->raw[k], pe->n_raw[k], pe->has_ell[k], 0, E, out, 1))
      return wt_errorf(WT_ERR_SHAPE, "equation \"%s\": bad output term", eq);
  } else {
    int count[ELL] = {0};
    for (int k = 0; k < pe->n_ops; k++)
      for (int i = 0; i < ops[k].n; i++)
        if (ops[k].ids[i] < ELL) count[ops[k].ids[i]]++;
    out->n = 0;
    for (int j = 0; j < E; j++) out->ids[out->n++] = ELL + j;
    for (int id = 0; id < ELL; id++)
      if (count[id] == 1) {
        if (out->n >= WT_MAX_RANK) return wt_errorf(WT_ERR_UNSUPPORTED, "output rank above %d", WT_MAX_RANK);
        out->ids[out->n++] = id;
      }
  }
  *E_out = E;
  return WT_OK;
}

static int find(const int *a, int n, int v) {
  for (int i = 0; i < n; i++)
    if (a[i] == v) return i;
  return -1;
}

static int concat3(int8_t *dst, const int8_t *a, int na, const int8_t *b, int nb,
                   const int8_t *c, int nc) {
  int n = 0;
  for (int i = 0; i < na; i++) dst[n++] = a[i];
  for (int i = 0; i < nb; i++) dst[n++] = b[i];
  for (int i = 0; i < nc; i++) dst[n++] = c[i];
  return n;
}

static int matches(const int8_t *ids, int n, const int8_t *s, int ns) {
  if (n != ns) return 0;
  for (int i = 0; i < n; i++)
    if (ids[i] != s[i]) return 0;
  return 1;
}

static int es_infer(wt_infer_ctx *ctx) {
  es_params *p = WT_PARAMS(ctx, es_params);
  const char *eq = wt_attr_string(ctx->node, "equation", NULL);
  if (!eq) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'equation' is missing");
  es_parsed pe;
  WT_TRY(parse_equation(eq, &pe));
  if (pe.n_ops != ctx->n_in)
    return wt_errorf(WT_ERR_INVALID_ARG, "equation \"%s\" has %d operands; the node has %d inputs",
                     eq, pe.n_ops, ctx->n_in);
  int dt = ctx->in[0].dtype, ranks[WT_EINSUM_MAX_OPS];
  if (dt != WT_FLOAT && dt != WT_INT32 && dt != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 0 has dtype %s; expected float, int32 or int64",
                     wt_dtype_name(dt));
  for (int k = 0; k < ctx->n_in; k++) {
    if (ctx->in[k].dtype != dt)
      return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s; expected %s like input 0", k,
                       wt_dtype_name(ctx->in[k].dtype), wt_dtype_name(dt));
    ranks[k] = ctx->in[k].rank;
  }
  es_term ops[WT_EINSUM_MAX_OPS] = {0}, out = {0};
  int E;
  WT_TRY(resolve(eq, &pe, ranks, ops, &out, &E));
  /* Compact ids: output ids first (output order), then the summed ones. */
  int compact[ELL + WT_MAX_RANK], order[WT_EINSUM_MAX_IDS], n_ids = 0;
  int64_t gdim[ELL + WT_MAX_RANK];
  for (int i = 0; i < ELL + WT_MAX_RANK; i++) {
    compact[i] = -1;
    gdim[i] = -1;
  }
  for (int k = 0; k < pe.n_ops; k++)
    for (int i = 0; i < ops[k].n; i++) {
      int id = ops[k].ids[i];
      int64_t d = ctx->in[k].dims[i];
      if (gdim[id] < 0 || gdim[id] == 1) gdim[id] = d;
      else if (d != 1 && d != gdim[id])
        return wt_errorf(WT_ERR_SHAPE, "equation \"%s\": a subscript has size %lld in operand %d "
                         "but %lld elsewhere", eq, (long long)d, k, (long long)gdim[id]);
    }
  for (int i = 0; i < out.n; i++) {
    int id = out.ids[i];
    if (gdim[id] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "equation \"%s\": output subscript not in any input", eq);
    if (compact[id] >= 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "equation \"%s\": output subscript repeated", eq);
    compact[id] = n_ids;
    order[n_ids++] = id;
  }
  p->n_out = n_ids;
  for (int id = 0; id < ELL + WT_MAX_RANK; id++)
    if (gdim[id] >= 0 && compact[id] < 0) {
      if (n_ids >= WT_EINSUM_MAX_IDS)
        return wt_errorf(WT_ERR_UNSUPPORTED, "more than %d distinct subscripts", WT_EINSUM_MAX_IDS);
      compact[id] = n_ids;
      order[n_ids++] = id;
    }
  p->n_ids = n_ids;
  p->n_ops = pe.n_ops;
  p->dtype = dt;
  for (int i = 0; i < n_ids; i++) p->dims[i] = gdim[order[i]];
  for (int k = 0; k < pe.n_ops; k++) {
    p->op_rank[k] = (int8_t)ops[k].n;
    for (int i = 0; i < ops[k].n; i++) p->op_ids[k][i] = (int8_t)compact[ops[k].ids[i]];
  }
  int64_t odims[WT_MAX_RANK];
  for (int i = 0; i < out.n; i++) odims[i] = p->dims[i];
  wt_set_shape(&ctx->out[0], dt, out.n, odims);

  /* GEMM plan: two float operands, no diagonal, no broadcast, no operand-only summed id. */
  p->gemm = 0;
  if (pe.n_ops != 2 || dt != WT_FLOAT) return WT_OK;
  int in_a[WT_EINSUM_MAX_IDS] = {0}, in_b[WT_EINSUM_MAX_IDS] = {0};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < ops[k].n; i++) {
      int c = p->op_ids[k][i];
      int *seen = k ? in_b : in_a;
      if (seen[c] || ctx->in[k].dims[i] != p->dims[c]) return WT_OK;
      seen[c] = 1;
    }
  p->nb_ids = p->nm_ids = p->nn_ids = p->nk_ids = 0;
  for (int c = 0; c < n_ids; c++) {
    int is_out = c < p->n_out;
    if (in_a[c] && in_b[c] && is_out) p->b_ids[p->nb_ids++] = (int8_t)c;
    else if (in_a[c] && !in_b[c] && is_out) p->m_ids[p->nm_ids++] = (int8_t)c;
    else if (!in_a[c] && in_b[c] && is_out) p->n_ids_[p->nn_ids++] = (int8_t)c;
    else if (in_a[c] && in_b[c]) p->k_ids[p->nk_ids++] = (int8_t)c;
    else return WT_OK;
  }
  /* K ids in A's order, so A needs no copy more often. */
  p->nk_ids = 0;
  for (int i = 0; i < ops[0].n; i++) {
    int c = p->op_ids[0][i];
    if (in_b[c] && c >= p->n_out) p->k_ids[p->nk_ids++] = (int8_t)c;
  }
  p->nb = p->m = p->n = p->k = 1;
  for (int i = 0; i < p->nb_ids; i++) p->nb *= p->dims[p->b_ids[i]];
  for (int i = 0; i < p->nm_ids; i++) p->m *= p->dims[p->m_ids[i]];
  for (int i = 0; i < p->nn_ids; i++) p->n *= p->dims[p->n_ids_[i]];
  for (int i = 0; i < p->nk_ids; i++) p->k *= p->dims[p->k_ids[i]];
  /* Does an operand already have the layout [B, X, Y] (or [B, Y, X])? */
  int8_t s1[3 * WT_MAX_RANK] = {0};
  int ns;
  ns = concat3(s1, p->b_ids, p->nb_ids, p->m_ids, p->nm_ids, p->k_ids, p->nk_ids);
  int a_mk = matches(p->op_ids[0], ops[0].n, s1, ns);
  ns = concat3(s1, p->b_ids, p->nb_ids, p->k_ids, p->nk_ids, p->m_ids, p->nm_ids);
  int a_km = matches(p->op_ids[0], ops[0].n, s1, ns);
  ns = concat3(s1, p->b_ids, p->nb_ids, p->k_ids, p->nk_ids, p->n_ids_, p->nn_ids);
  int b_kn = matches(p->op_ids[1], ops[1].n, s1, ns);
  ns = concat3(s1, p->b_ids, p->nb_ids, p->n_ids_, p->nn_ids, p->k_ids, p->nk_ids);
  int b_nk = matches(p->op_ids[1], ops[1].n, s1, ns);
  ns = concat3(s1, p->b_ids, p->nb_ids, p->m_ids, p->nm_ids, p->n_ids_, p->nn_ids);
  int c_ok = p->n_out == ns;
  for (int i = 0; c_ok && i < ns; i++) c_ok = s1[i] == i;
  p->copy_a = !a_mk && !a_km;
  p->trans_a = !a_mk && a_km;
  p->copy_b = !b_kn && !b_nk;
  p->trans_b = !b_kn && b_nk;
  p->copy_c = !c_ok;
  p->gemm = 1;
  return WT_OK;
}


/* ---- gradient -------------------------------------------------------------------------------- */

static void term_str(const int *raw, int n, const unsigned char *drop, char *buf, size_t *len) {
  for (int i = 0; i < n; i++) {
    if (drop && drop[i]) continue;
    if (raw[i] < 0) {
      memcpy(buf + *len, "...", 3);
      *len += 3;
    } else {
      buf[(*len)++] = (char)(raw[i] < 26 ? 'A' + raw[i] : 'a' + raw[i] - 26);
    }
  }
  buf[*len] = '\0';
}

/* Static size of id `id` in operand j (raw term, tensor value v), or -2 when absent. */
static int64_t id_dim(const int *raw, int n_raw, int has_ell, const wt_value *v, int E, int id) {
  int e = has_ell ? v->rank - (n_raw - 1) : 0, axis = 0;
  for (int i = 0; i < n_raw; i++) {
    if (raw[i] >= 0) {
      if (raw[i] == id) return v->rank > axis ? v->dims[axis] : -1;
      axis++;
    } else {
      for (int j = 0; j < e; j++, axis++)
        if (ELL + (E - e) + j == id) return v->rank > axis ? v->dims[axis] : -1;
    }
  }
  return -2;
}

/* dA_k = Einsum("out, others -> term_k")(dY, others), then: leading broadcast ellipsis dims
 * summed away, size-1 broadcast axes summed (keepdims), and subscripts that only operand k has
 * (summed by the forward) restored by Unsqueeze + Expand. Diagonals are not supported. */
static int es_grad(wt_grad_ctx *c) {
  const char *eq = wt_attr_string(wt_grad_node(c), "equation", "");
  es_parsed pe;
  if (parse_equation(eq, &pe)) return wt_grad_fail(c, WT_ERR_INVALID_ARG, "%s", wt_error_message());
  int n_ops = pe.n_ops, E = 0, any_ell = 0;
  /* Copies: emitting nodes may move the graph's value array. */
  wt_value vcopy[WT_EINSUM_MAX_OPS + 1];
  const wt_value *vals[WT_EINSUM_MAX_OPS + 1];
  for (int k = 0; k <= n_ops; k++) {
    vcopy[k] = *wt_grad_value(c, k < n_ops ? I(k) : O(0));
    vals[k] = &vcopy[k];
  }
  for (int k = 0; k < n_ops; k++) {
    if (pe.has_ell[k]) {
      any_ell = 1;
      if (vals[k]->rank < 0)
        return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of operand %d must be known", k);
      int e = vals[k]->rank - (pe.n_raw[k] - 1);
      if (e > E) E = e;
    }
  }
  /* The output term, made explicit. */
  int *out = pe.raw[n_ops];
  if (!pe.explicit_out) {
    int count[ELL] = {0}, n = 0;
    for (int k = 0; k < n_ops; k++)
      for (int i = 0; i < pe.n_raw[k]; i++)
        if (pe.raw[k][i] >= 0) count[pe.raw[k][i]]++;
    if (any_ell) out[n++] = -1;
    for (int id = 0; id < ELL; id++)
      if (count[id] == 1 && n < WT_MAX_RANK + 1) out[n++] = id;
    pe.n_raw[n_ops] = n;
    pe.has_ell[n_ops] = any_ell;
  }
  for (int k = 0; k < n_ops; k++) {
    if (!wt_grad_need(c, k)) continue;
    const int *raw = pe.raw[k];
    int n_raw = pe.n_raw[k];
    int e_k = pe.has_ell[k] ? vals[k]->rank - (n_raw - 1) : 0;
    unsigned char drop[WT_MAX_RANK + 1] = {0};
    int n_drop = 0;
    for (int i = 0; i < n_raw; i++) {
      for (int j = 0; j < i; j++)
        if (raw[i] >= 0 && raw[j] == raw[i])
          return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "equation \"%s\": the gradient of operand %d "
                              "with a repeated subscript (a diagonal) is not supported", eq, k);
      int elsewhere = 0;
      for (int j = 0; j <= n_ops && !elsewhere; j++)
        if (j != k) elsewhere = find(pe.raw[j], pe.n_raw[j], raw[i]) >= 0;
      if (!elsewhere) {
        if (raw[i] < 0 && e_k > 0)
          return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "equation \"%s\": operand %d's ellipsis "
                              "dims are summed away; not supported", eq, k);
        if (raw[i] >= 0) {
          drop[i] = 1;
          n_drop++;
        }
      }
    }
    char geq[256];
    size_t len = 0;
    int ins[WT_EINSUM_MAX_OPS + 1], n_in = 0;
    term_str(out, pe.n_raw[n_ops], NULL, geq, &len);
    ins[n_in++] = GO(0);
    for (int j = 0; j < n_ops; j++) {
      if (j == k) continue;
      geq[len++] = ',';
      term_str(pe.raw[j], pe.n_raw[j], NULL, geq, &len);
      ins[n_in++] = I(j);
    }
    memcpy(geq + len, "->", 2);
    len += 2;
    term_str(raw, n_raw, drop, geq, &len);
    int g = wt_grad_op1(c, "Einsum", "", n_in, ins);
    if (g < 0) return wt_grad_status(c);
    if (wt_node_set_string(c->g, wt_grad_last(c), "equation", geq))
      return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
    /* Axes of the kept term: ids, and where the ellipsis starts. */
    int ell_pos = -1, kept_ids[WT_MAX_RANK * 2], nk = 0;
    for (int i = 0; i < n_raw; i++) {
      if (drop[i]) continue;
      if (raw[i] >= 0) kept_ids[nk++] = raw[i];
      else {
        ell_pos = nk;
        for (int j = 0; j < E; j++) kept_ids[nk++] = ELL + j;
      }
    }
    /* The gradient's "..." spans all E broadcast dims; operand k has only the last e_k. */
    if (ell_pos >= 0 && e_k < E) {
      int64_t axes[WT_MAX_RANK];
      for (int j = 0; j < E - e_k; j++) axes[j] = ell_pos + j;
      g = wt_grad_reduce_sum(c, g, axes, E - e_k, 0);
      memmove(kept_ids + ell_pos, kept_ids + ell_pos + (E - e_k),
              sizeof(int) * (size_t)(nk - ell_pos - (E - e_k)));
      nk -= E - e_k;
    }
    /* Size-1 axes of operand k broadcast against a larger (or unknown) size elsewhere. */
    int64_t red[WT_MAX_RANK];
    int n_red = 0;
    for (int a = 0; a < nk; a++) {
      int64_t mine = id_dim(raw, n_raw, pe.has_ell[k], vals[k], E, kept_ids[a]);
      if (mine != 1) continue;
      for (int j = 0; j <= n_ops; j++) {
        if (j == k) continue;
        int64_t d = id_dim(pe.raw[j], pe.n_raw[j], pe.has_ell[j], vals[j], E, kept_ids[a]);
        if (d != -2 && d != 1) {
          red[n_red++] = a;
          break;
        }
      }
    }
    if (n_red) g = wt_grad_reduce_sum(c, g, red, n_red, 1);
    if (n_drop) {
      int64_t pos[WT_MAX_RANK];
      int np = 0, axis = 0;
      for (int i = 0; i < n_raw; i++) {
        if (raw[i] < 0) {
          axis += e_k;
          continue;
        }
        if (drop[i]) pos[np++] = axis;
        axis++;
      }
      g = wt_grad_unsqueeze(c, g, pos, np);
      g = wt_grad_expand_like(c, g, I(k));
    }
    wt_grad_set(c, k, g);
  }
  return wt_grad_status(c);
}

static const wt_op_def wt_op_Einsum = {
    .domain = "", .op_type = "Einsum", .min_inputs = 1, .max_inputs = WT_EINSUM_MAX_OPS,
    .min_outputs = 1, .max_outputs = 1, .infer = es_infer, .grad = es_grad};

const wt_op_def *const wt_ops_einsum[] = {
    &wt_op_Einsum,
    NULL,
};
