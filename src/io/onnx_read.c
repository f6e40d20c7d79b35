/* ModelProto -> IR. Everything webtrain cannot honour is rejected here with a message that
 * names the node, tensor or attribute: nested graphs, sparse tensors, unsupported dtypes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_external.h"
#include "io/onnx_io.h"
#include "io/onnx_tensor.h"
#include "onnx.pb-c.h"

static int read_value_type(wt_graph *g, int v, const Onnx__ValueInfoProto *vi, const char *what) {
  wt_value *val = &g->values[v];
  const Onnx__TypeProto *tp = vi->type;
  if (!tp) return WT_OK; /* type unknown: inferred later */
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type &&
      tp->sequence_type->elem_type &&
      tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    /* Sequences of tensors: the optimizer model's params/gradients/moments. */
    val->flags |= WT_VALUE_SEQUENCE;
    tp = tp->sequence_type->elem_type;
  } else if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%s '%s' is not a tensor or a sequence of tensors (map/optional/sparse types "
                     "are not supported)", what, val->name);
  }
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (tt->has_elem_type && tt->elem_type != 0 && !wt_dtype_supported(tt->elem_type))
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%s '%s' has dtype %s; webtrain supports float, int32, int64, bool and float16 "
                     "(weights)", what,
                     val->name, wt_dtype_name(tt->elem_type));
  val->dtype = tt->has_elem_type ? tt->elem_type : 0;
  if (!tt->shape) return WT_OK;
  if (tt->shape->n_dim > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s '%s' has rank %zu; webtrain supports rank <= %d",
                     what, val->name, tt->shape->n_dim, WT_MAX_RANK);
  int rank = (int)tt->shape->n_dim;
  int64_t dims[WT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int fixed = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0;
    dims[i] = fixed ? d->dim_value : -1;
  }
  WT_TRY(wt_value_set_shape(g, v, rank, dims));
  for (int i = 0; i < rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (dims[i] < 0 && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param)
      WT_TRY(wt_value_set_dim_param(g, v, i, d->dim_param));
  }
  return WT_OK;
}

static int read_attr(wt_graph *g, int node, const Onnx__AttributeProto *ap) {
  const wt_node *n = &g->nodes[node];
  const char *aname = ap->name ? ap->name : "";
  if (ap->ref_attr_name && ap->ref_attr_name[0])
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s: attribute '%s' refers to a function attribute",
                     wt_node_label(n), aname);
  int type = ap->has_type ? (int)ap->type : 0;
  switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
      return wt_errorf(WT_ERR_UNSUPPORTED,
                       "%s: attribute '%s' holds a nested graph; control flow (If/Loop/Scan) is "
                       "not supported yet", wt_node_label(n), aname);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
      return wt_errorf(WT_ERR_UNSUPPORTED, "%s: attribute '%s' is a sparse tensor (not supported)",
                       wt_node_label(n), aname);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
      return wt_errorf(WT_ERR_UNSUPPORTED, "%s: attribute '%s' is a type (not supported)",
                       wt_node_label(n), aname);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
      return wt_errorf(WT_ERR_UNSUPPORTED, "%s: attribute '%s' is a list of tensors (not supported)",
                       wt_node_label(n), aname);
    default:
      break;
  }
  if (type < 1 || type > 8)
    return wt_errorf(WT_ERR_PARSE, "%s: attribute '%s' has no valid type (%d)", wt_node_label(n),
                     aname, type);
  wt_attr *a = wt_node_add_attr(g, node, aname, (wt_attr_type)type);
  if (!a) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  switch (type) {
    case WT_ATTR_FLOAT: a->f = ap->f; break;
    case WT_ATTR_INT: a->i = ap->i; break;
    case WT_ATTR_STRING:
      a->s = wt_strndup((const char *)ap->s.data, ap->s.len);
      a->s_len = ap->s.len;
      if (!a->s) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      break;
    case WT_ATTR_TENSOR: {
      if (!ap->t) return wt_errorf(WT_ERR_PARSE, "%s: tensor attribute '%s' has no tensor",
                                   wt_node_label(n), aname);
      a->t = calloc(1, sizeof *a->t);
      if (!a->t) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      int rc = wt_tensor_from_proto(ap->t, NULL, "tensor attribute", a->t);
      if (rc) return wt_error_context(rc, "%s: attribute '%s'", wt_node_label(n), aname);
      break;
    }
    case WT_ATTR_FLOATS:
      a->n = (int)ap->n_floats;
      a->floats = malloc(sizeof(float) * (ap->n_floats + 1));
      if (!a->floats) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      if (ap->n_floats) memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
      break;
    case WT_ATTR_INTS:
      a->n = (int)ap->n_ints;
      a->ints = malloc(sizeof(int64_t) * (ap->n_ints + 1));
      if (!a->ints) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      if (ap->n_ints) memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
      break;
    case WT_ATTR_STRINGS:
      a->n = (int)ap->n_strings;
      a->strings = calloc(ap->n_strings + 1, sizeof(char *));
      if (!a->strings) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      for (size_t i = 0; i < ap->n_strings; i++) {
        a->strings[i] = wt_strndup((const char *)ap->strings[i].data, ap->strings[i].len);
        if (!a->strings[i]) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      }
      break;
  }
  return WT_OK;
}

static int value_or_none(wt_graph *g, const char *name) {
  if (!name || !name[0]) return -1; /* omitted optional input/output */
  return wt_graph_value(g, name);
}

static int read_node(wt_graph *g, const Onnx__NodeProto *np, int index) {
  int ins[64], outs[64];
  char fallback[32];
  const char *name = np->name && np->name[0] ? np->name : NULL;
  if (!name) {
    snprintf(fallback, sizeof fallback, "#%d", index);
    name = fallback;
  }
  if (!np->op_type || !np->op_type[0])
    return wt_errorf(WT_ERR_PARSE, "node '%s' has no op_type", name);
  if (np->n_input > 64 || np->n_output > 64)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s node '%s' has %zu inputs and %zu outputs; at most 64 "
                     "each are supported", np->op_type, name, np->n_input, np->n_output);
  for (size_t i = 0; i < np->n_input; i++) ins[i] = value_or_none(g, np->input[i]);
  for (size_t i = 0; i < np->n_output; i++) outs[i] = value_or_none(g, np->output[i]);
  for (size_t i = 0; i < np->n_output; i++)
    if (outs[i] >= 0 && (g->values[outs[i]].producer >= 0 ||
                         (g->values[outs[i]].flags & (WT_VALUE_GRAPH_INPUT | WT_VALUE_INITIALIZER))))
      return wt_errorf(WT_ERR_PARSE, "%s node '%s': output '%s' is already defined elsewhere (ONNX "
                       "graphs are single-assignment)", np->op_type, name, np->output[i]);
  int node = wt_graph_add_node(g, np->op_type, np->domain, name, (int)np->n_input, ins,
                               (int)np->n_output, outs);
  if (node < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (size_t i = 0; i < np->n_attribute; i++) WT_TRY(read_attr(g, node, np->attribute[i]));
  return WT_OK;
}

static int is_external(const Onnx__TensorProto *tp) {
  return tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* The bytes `share` has loaded for this file range and dtype, or NULL. */
static void *shared_bytes(const wt_graph *share, const wt_external_ref *r, int dtype) {
  for (int i = 0; share && i < share->n_ext; i++) {
    const wt_external_init *e = &share->ext[i];
    if (e->offset != r->offset || strcmp(e->location, r->location)) continue;
    int v = wt_graph_find(share, e->name);
    const wt_value *val = v < 0 ? NULL : &share->values[v];
    if (val && (val->flags & WT_VALUE_INITIALIZER) && val->data && val->nbytes == r->length &&
        val->dtype == dtype)
      return val->data;
  }
  return NULL;
}

/* An external initializer held by reference (opts->keep_external: float and float16 tensors,
 * the weights; a float16 base's weights are read through Casts the planner elides) or borrowing
 * opts->share's bytes of the same file range; *done 0 when neither applies (it is read). */
static int read_by_reference(wt_graph *g, const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                             int *done) {
  *done = 0;
  int dtype = tp->has_data_type ? tp->data_type : 0;
  if (!wt_dtype_supported(dtype) || tp->segment) return WT_OK; /* the plain read says what is wrong */
  int64_t n;
  WT_TRY(wt_check_dims("initializer", tp->name, (int)tp->n_dims, tp->dims, &n));
  size_t nbytes = (size_t)n * wt_dtype_size(dtype);
  wt_external_ref r;
  WT_TRY(wt_external_parse(tp, nbytes, tp->name, &r));
  void *data = shared_bytes(opts->share, &r, dtype);
  if (!data && !(opts->keep_external && (dtype == WT_FLOAT || dtype == WT_FLOAT16) && nbytes > 0)) return WT_OK;
  int v = wt_graph_value(g, tp->name);
  if (v < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  wt_value *val = &g->values[v];
  val->flags |= WT_VALUE_INITIALIZER | WT_VALUE_EXTERNAL | (data ? WT_VALUE_BORROWED : 0) |
                wt_lora_mark_of_doc(tp->doc_string);
  val->dtype = (int8_t)dtype;
  val->data = data;
  val->nbytes = nbytes;
  int64_t dims[WT_MAX_RANK];
  for (size_t d = 0; d < tp->n_dims; d++) dims[d] = tp->dims[d];
  WT_TRY(wt_value_set_shape(g, v, (int)tp->n_dims, dims));
  *done = 1;
  return wt_graph_set_external(g, tp->name, r.location, r.offset);
}

/* The bytes of share's initializer `name` when they equal t's (dtype, dims and content), else
 * NULL: a module's eval model embedding the same frozen weights as its training model (float16
 * ones converted at generation, keepExternalData: false artifacts) borrows them, so that the
 * heap holds them once. Only above WT_PACK_DATA_MAX (compaction moves smaller ones). */
static void *same_bytes(const wt_graph *share, const char *name, const wt_tensor *t) {
  size_t nbytes = wt_nbytes(t);
  int v = share && nbytes > WT_PACK_DATA_MAX ? wt_graph_find(share, name) : -1;
  const wt_value *s = v < 0 ? NULL : &share->values[v];
  if (!s || !(s->flags & WT_VALUE_INITIALIZER) || !s->data || s->nbytes != nbytes || s->dtype != t->dtype ||
      s->rank != t->rank || (t->rank > 0 && memcmp(s->dims, t->dims, sizeof(int64_t) * (size_t)t->rank)))
    return NULL;
  return memcmp(s->data, t->data, nbytes) ? NULL : s->data;
}

static int read_initializer(wt_graph *g, const Onnx__TensorProto *tp, size_t i,
                            const wt_onnx_read_opts *opts) {
  if (!tp->name || !tp->name[0]) return wt_errorf(WT_ERR_PARSE, "initializer #%zu has no name", i);
  if (wt_graph_find(g, tp->name) >= 0)
    return wt_errorf(WT_ERR_PARSE, "initializer '%s' is defined twice", tp->name);
  if (is_external(tp) && opts && (opts->keep_external || opts->share)) {
    int done;
    WT_TRY(read_by_reference(g, tp, opts, &done));
    if (done) return WT_OK;
  }
  wt_const_tensor ct;
  WT_TRY(wt_tensor_from_proto(tp, opts, "initializer", &ct));
  int v = wt_graph_value(g, tp->name);
  free(ct.name);
  if (v < 0) {
    free(ct.t.data);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  wt_value *val = &g->values[v];
  void *same = opts ? same_bytes(opts->share, tp->name, &ct.t) : NULL;
  val->flags |= WT_VALUE_INITIALIZER | (same ? WT_VALUE_BORROWED : 0) | wt_lora_mark_of_doc(tp->doc_string);
  val->dtype = ct.t.dtype;
  val->data = same ? same : ct.t.data;
  val->nbytes = wt_nbytes(&ct.t);
  if (same) free(ct.t.data);
  WT_TRY(wt_value_set_shape(g, v, ct.t.rank, ct.t.dims));
  if (!is_external(tp)) return WT_OK;
  /* loaded, and its reference kept: another graph of the same file range can borrow it */
  wt_external_ref r;
  WT_TRY(wt_external_parse(tp, val->nbytes, tp->name, &r));
  g->values[v].flags |= WT_VALUE_EXTERNAL;
  return wt_graph_set_external(g, tp->name, r.location, r.offset);
}

static int read_io(wt_graph *g, const Onnx__GraphProto *gp, int outputs) {
  size_t n = outputs ? gp->n_output : gp->n_input;
  for (size_t i = 0; i < n; i++) {
    const Onnx__ValueInfoProto *vi = outputs ? gp->output[i] : gp->input[i];
    const char *what = outputs ? "output" : "input";
    if (!vi->name || !vi->name[0]) return wt_errorf(WT_ERR_PARSE, "graph %s #%zu has no name", what, i);
    int v = wt_graph_find(g, vi->name);
    if (outputs) {
      if (v < 0)
        return wt_errorf(WT_ERR_PARSE, "graph output '%s' is not produced by any node, input or "
                         "initializer", vi->name);
      if (!(g->values[v].flags & WT_VALUE_INITIALIZER)) WT_TRY(read_value_type(g, v, vi, "graph output"));
      WT_TRY(wt_graph_add_output(g, v));
      continue;
    }
    /* Older exporters list initializers among the inputs: those stay initializers. */
    if (v >= 0 && (g->values[v].flags & WT_VALUE_INITIALIZER)) continue;
    if (v >= 0) return wt_errorf(WT_ERR_PARSE, "graph input '%s' is listed twice", vi->name);
    v = wt_graph_value(g, vi->name);
    if (v < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    WT_TRY(read_value_type(g, v, vi, "graph input"));
    g->values[v].flags |= wt_lora_mark_of_doc(vi->doc_string);
    WT_TRY(wt_graph_add_input(g, v));
  }
  return WT_OK;
}

static void read_value_info(wt_graph *g, const Onnx__ValueInfoProto *vi) {
  if (!vi->name) return;
  int v = wt_graph_find(g, vi->name);
  if (v < 0 || (g->values[v].flags & (WT_VALUE_INITIALIZER | WT_VALUE_GRAPH_INPUT | WT_VALUE_GRAPH_OUTPUT)))
    return;
  /* Intermediate annotations are hints only; unsupported ones are ignored here and the planner
   * reports the real problem at the node that produces such a value. */
  if (read_value_type(g, v, vi, "value") != WT_OK) wt_error_clear();
}

/* GraphProto fields read one message at a time */
enum { GRAPH_NODE = 1, GRAPH_INITIALIZER = 5, GRAPH_VALUE_INFO = 13 };

/* Reads the GraphProto in bytes (checked) part by part: the small fields are unpacked together,
 * then each initializer, node and value_info is unpacked, read into the IR and freed before the
 * next, so that loading holds the serialized model plus one part, never the whole unpacked
 * message (3-4x the file) beside the IR. Parts are read in ONNX's order of definition:
 * initializers, inputs, nodes, outputs, value_info. */
static int read_graph(wt_graph *g, const uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts) {
  static const uint32_t parts[] = {GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_VALUE_INFO};
  uint8_t *rest;
  size_t rest_len;
  WT_TRY(wt_pb_without(bytes, len, parts, 3, &rest, &rest_len));
  Onnx__GraphProto *gp = onnx__graph_proto__unpack(NULL, rest_len, rest);
  free(rest);
  if (!gp) return wt_errorf(WT_ERR_PARSE, "not a valid ONNX model: its graph does not parse as a GraphProto");
  /* the arrays sized up front: nodes as many as node fields, values at most the initializers,
   * inputs and node outputs (each node's output fields counted without unpacking it) */
  size_t at = 0, n_nodes = 0, n_values = gp->n_input;
  wt_pb_field f;
  while (wt_pb_next(bytes, len, &at, &f)) {
    if (f.wire != 2) continue;
    if (f.id == GRAPH_INITIALIZER) n_values++;
    if (f.id != GRAPH_NODE) continue;
    n_nodes++;
    size_t nat = 0;
    wt_pb_field nf;
    while (wt_pb_next(f.payload, f.len, &nat, &nf)) n_values += nf.id == 2 && nf.wire == 2; /* NodeProto.output */
  }
  int rc = n_nodes < INT_MAX / 2 && n_values < INT_MAX / 2 ? wt_graph_reserve(g, (int)n_values, (int)n_nodes)
                                                           : wt_errorf(WT_ERR_UNSUPPORTED, "graph too large");
  wt_graph_release(g, g->name);
  if (rc == WT_OK && !(g->name = wt_strdup(gp->name))) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (rc == WT_OK && gp->n_sparse_initializer)
    rc = wt_errorf(WT_ERR_UNSUPPORTED, "graph has %zu sparse initializers (not supported)",
                   gp->n_sparse_initializer);
  for (int pass = 0; pass < 5 && rc == WT_OK; pass++) {
    if (pass == 1 || pass == 3) { /* inputs, outputs */
      rc = read_io(g, gp, pass == 3);
      continue;
    }
    uint32_t want = pass == 0 ? GRAPH_INITIALIZER : pass == 2 ? GRAPH_NODE : GRAPH_VALUE_INFO;
    size_t i = 0;
    at = 0;
    while (rc == WT_OK && wt_pb_next(bytes, len, &at, &f)) {
      if (f.id != want || f.wire != 2) continue;
      if (want == GRAPH_INITIALIZER) {
        Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, f.len, f.payload);
        rc = tp ? read_initializer(g, tp, i, opts)
                : wt_errorf(WT_ERR_PARSE, "initializer #%zu does not parse as a TensorProto", i);
        onnx__tensor_proto__free_unpacked(tp, NULL);
      } else if (want == GRAPH_NODE) {
        Onnx__NodeProto *np = onnx__node_proto__unpack(NULL, f.len, f.payload);
        rc = np ? read_node(g, np, (int)i)
                : wt_errorf(WT_ERR_PARSE, "node #%zu does not parse as a NodeProto", i);
        onnx__node_proto__free_unpacked(np, NULL);
      } else {
        Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, f.len, f.payload);
        if (vi) read_value_info(g, vi); /* hints only */
        onnx__value_info_proto__free_unpacked(vi, NULL);
      }
      i++;
    }
  }
  onnx__graph_proto__free_unpacked(gp, NULL);
  return rc ? rc : wt_graph_toposort(g);
}

enum { MODEL_GRAPH = 7 };

/* `owned`: the caller's malloc'd copy of bytes, freed once read. */
static int read_model(const uint8_t *bytes, size_t len, uint8_t *owned,
                      const wt_onnx_read_opts *opts, wt_graph **out) {
  *out = NULL;
  Onnx__ModelProto *mp = NULL;
  wt_graph *g = NULL;
  int rc = wt_pb_check(&onnx__model_proto__descriptor, bytes, len, "ModelProto");
  if (rc) {
    rc = wt_error_context(rc, "not a valid ONNX model (%zu bytes)", len);
    goto done;
  }
  /* the graph is read part by part (read_graph); the rest of the model at once */
  const uint8_t *graph = NULL;
  size_t graph_len = 0, at = 0;
  int n_graphs = 0;
  wt_pb_field f;
  while (wt_pb_next(bytes, len, &at, &f))
    if (f.id == MODEL_GRAPH && f.wire == 2) graph = f.payload, graph_len = f.len, n_graphs++;
  if (n_graphs != 1) {
    rc = n_graphs ? wt_errorf(WT_ERR_UNSUPPORTED, "ONNX model has its graph field %d times (protobuf "
                              "would merge them; not supported)", n_graphs)
                  : wt_errorf(WT_ERR_PARSE, "ONNX model has no graph");
    goto done;
  }
  uint8_t *rest;
  size_t rest_len;
  static const uint32_t drop[] = {MODEL_GRAPH};
  if ((rc = wt_pb_without(bytes, len, drop, 1, &rest, &rest_len))) goto done;
  mp = onnx__model_proto__unpack(NULL, rest_len, rest);
  free(rest);
  if (!mp) {
    rc = wt_errorf(WT_ERR_PARSE, "not a valid ONNX model: the %zu bytes do not parse as a ModelProto", len);
    goto done;
  }
  if (!(g = wt_graph_new())) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto done;
  }
  if (mp->n_functions) {
    rc = wt_errorf(WT_ERR_UNSUPPORTED, "ONNX model defines %zu local functions (not supported)",
                   mp->n_functions);
    goto done;
  }
  g->ir_version = mp->has_ir_version ? mp->ir_version : 0;
  wt_graph_release(g, g->producer_name);
  wt_graph_release(g, g->producer_version);
  g->producer_name = wt_strdup(mp->producer_name);
  g->producer_version = wt_strdup(mp->producer_version);
  if (!g->producer_name || !g->producer_version) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (size_t i = 0; i < mp->n_opset_import && rc == WT_OK; i++)
    rc = wt_graph_set_opset(g, mp->opset_import[i]->domain,
                            mp->opset_import[i]->has_version ? mp->opset_import[i]->version : 1);
  if (rc == WT_OK && mp->n_opset_import == 0)
    rc = wt_graph_set_opset(g, "", 1); /* IR < 3 models: the default domain at version 1 */
  onnx__model_proto__free_unpacked(mp, NULL);
  mp = NULL;
  if (rc == WT_OK) rc = read_graph(g, graph, graph_len, opts);
done:
  onnx__model_proto__free_unpacked(mp, NULL);
  free(owned);
  if (rc) {
    wt_graph_free(g);
    return rc;
  }
  wt_graph_shrink(g);
  *out = g;
  return WT_OK;
}

int wt_onnx_read(const uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts, wt_graph **out) {
  return read_model(bytes, len, NULL, opts, out);
}

int wt_onnx_read_owned(uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts, wt_graph **out) {
  return read_model(bytes, len, bytes, opts, out);
}
