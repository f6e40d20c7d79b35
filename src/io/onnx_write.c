/* IR -> ModelProto bytes. The protobuf-c structs point into the IR (no copies); only the
 * pointer arrays are allocated, all at once per message kind, and freed after packing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "io/onnx_tensor.h"
#include "onnx.pb-c.h"

typedef struct writer {
  void **blocks;
  int n_blocks, cap_blocks;
  int failed;
} writer;

static void *wz(writer *w, size_t size) {
  if (w->failed) return NULL;
  void *p = calloc(1, size ? size : 1);
  if (p && w->n_blocks == w->cap_blocks) {
    int nc = w->cap_blocks ? w->cap_blocks * 2 : 64;
    void **nb = realloc(w->blocks, sizeof *nb * (size_t)nc);
    if (!nb) {
      free(p);
      p = NULL;
    } else {
      w->blocks = nb;
      w->cap_blocks = nc;
    }
  }
  if (!p) {
    w->failed = 1;
    return NULL;
  }
  w->blocks[w->n_blocks++] = p;
  return p;
}

/* tp (an initializer held by reference) stores its bytes where the graph read them from: the
 * external_data entries location, offset, length. 0 when out of memory or it has no reference. */
static int external_ref(writer *w, const wt_graph *g, const wt_value *v, Onnx__TensorProto *tp) {
  const wt_external_init *e = wt_graph_external(g, v->name);
  Onnx__StringStringEntryProto **kv = wz(w, sizeof *kv * 3);
  char *nums = wz(w, 48);
  if (!e) w->failed = 2;
  if (!e || !kv || !nums) return 0;
  snprintf(nums, 24, "%llu", (unsigned long long)e->offset);
  snprintf(nums + 24, 24, "%llu", (unsigned long long)v->nbytes);
  const char *keys[3] = {"location", "offset", "length"};
  const char *vals[3] = {e->location, nums, nums + 24};
  for (int i = 0; i < 3; i++) {
    if (!(kv[i] = wz(w, sizeof **kv))) return 0;
    onnx__string_string_entry_proto__init(kv[i]);
    kv[i]->key = (char *)keys[i];
    kv[i]->value = (char *)vals[i];
  }
  tp->has_raw_data = 0;
  tp->raw_data.len = 0;
  tp->raw_data.data = NULL;
  tp->has_data_location = 1;
  tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  tp->n_external_data = 3;
  tp->external_data = kv;
  return 1;
}

static int write_model(const wt_graph *g, int refs, uint8_t **out, size_t *len);

static Onnx__ValueInfoProto *value_info(writer *w, const wt_value *v) {
  Onnx__ValueInfoProto *vi = wz(w, sizeof *vi);
  Onnx__TypeProto *tp = wz(w, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = wz(w, sizeof *tt);
  if (!vi || !tp || !tt) return NULL;
  onnx__value_info_proto__init(vi);
  onnx__type_proto__init(tp);
  onnx__type_proto__tensor__init(tt);
  vi->name = v->name;
  vi->doc_string = (char *)wt_lora_doc_of_mark(v); /* a LoRA adapter's mark (ir.h) */
  if (v->dtype == WT_UNDEFINED) return vi; /* type not known: leave it out */
  vi->type = tp;
  if (v->flags & WT_VALUE_SEQUENCE) {
    Onnx__TypeProto__Sequence *sq = wz(w, sizeof *sq);
    Onnx__TypeProto *elem = wz(w, sizeof *elem);
    if (!sq || !elem) return NULL;
    onnx__type_proto__sequence__init(sq);
    onnx__type_proto__init(elem);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    tp->sequence_type = sq;
    sq->elem_type = elem;
    tp = elem;
  }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  tt->has_elem_type = 1;
  tt->elem_type = v->dtype;
  if (v->rank >= 0 && !(v->flags & WT_VALUE_SEQUENCE)) {
    Onnx__TensorShapeProto *sp = wz(w, sizeof *sp);
    Onnx__TensorShapeProto__Dimension **dims = wz(w, sizeof *dims * (size_t)(v->rank + 1));
    if (!sp || !dims) return NULL;
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)v->rank;
    sp->dim = dims;
    for (int i = 0; i < v->rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = wz(w, sizeof *d);
      if (!d) return NULL;
      onnx__tensor_shape_proto__dimension__init(d);
      if (v->dims[i] >= 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = v->dims[i];
      } else if (wt_value_dim_param(v, i)) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = v->dim_param[i];
      }
      dims[i] = d;
    }
    tt->shape = sp;
  }
  return vi;
}

static Onnx__AttributeProto *attribute(writer *w, const wt_attr *a) {
  Onnx__AttributeProto *ap = wz(w, sizeof *ap);
  if (!ap) return NULL;
  onnx__attribute_proto__init(ap);
  ap->name = a->name;
  ap->has_type = 1;
  ap->type = (Onnx__AttributeProto__AttributeType)a->type;
  switch (a->type) {
    case WT_ATTR_FLOAT: ap->has_f = 1; ap->f = a->f; break;
    case WT_ATTR_INT: ap->has_i = 1; ap->i = a->i; break;
    case WT_ATTR_STRING:
      ap->has_s = 1;
      ap->s.data = (uint8_t *)a->s;
      ap->s.len = a->s_len;
      break;
    case WT_ATTR_TENSOR: {
      Onnx__TensorProto *tp = wz(w, sizeof *tp);
      int64_t *dims = wz(w, sizeof(int64_t) * WT_MAX_RANK);
      if (!tp || !dims) return NULL;
      wt_tensor_to_proto(a->t, tp, dims);
      ap->t = tp;
      break;
    }
    case WT_ATTR_FLOATS: ap->n_floats = (size_t)a->n; ap->floats = a->floats; break;
    case WT_ATTR_INTS: ap->n_ints = (size_t)a->n; ap->ints = a->ints; break;
    case WT_ATTR_STRINGS: {
      ProtobufCBinaryData *s = wz(w, sizeof *s * (size_t)(a->n + 1));
      if (!s) return NULL;
      for (int i = 0; i < a->n; i++) {
        s[i].data = (uint8_t *)a->strings[i];
        s[i].len = strlen(a->strings[i]);
      }
      ap->n_strings = (size_t)a->n;
      ap->strings = s;
      break;
    }
    default: break;
  }
  return ap;
}

static Onnx__NodeProto *node_proto(writer *w, const wt_graph *g, const wt_node *n) {
  Onnx__NodeProto *np = wz(w, sizeof *np);
  char **ins = wz(w, sizeof(char *) * (size_t)(n->n_inputs + 1));
  char **outs = wz(w, sizeof(char *) * (size_t)(n->n_outputs + 1));
  Onnx__AttributeProto **attrs = wz(w, sizeof *attrs * (size_t)(n->n_attrs + 1));
  if (!np || !ins || !outs || !attrs) return NULL;
  onnx__node_proto__init(np);
  static char empty[] = "";
  for (int i = 0; i < n->n_inputs; i++) ins[i] = n->inputs[i] >= 0 ? g->values[n->inputs[i]].name : empty;
  for (int i = 0; i < n->n_outputs; i++) outs[i] = n->outputs[i] >= 0 ? g->values[n->outputs[i]].name : empty;
  for (int i = 0; i < n->n_attrs; i++)
    if (!(attrs[i] = attribute(w, &n->attrs[i]))) return NULL;
  np->n_input = (size_t)n->n_inputs;
  np->input = ins;
  np->n_output = (size_t)n->n_outputs;
  np->output = outs;
  np->name = n->name;
  np->op_type = n->op_type;
  np->domain = n->domain;
  np->n_attribute = (size_t)n->n_attrs;
  np->attribute = attrs;
  return np;
}

int wt_onnx_write(const wt_graph *g, uint8_t **out, size_t *len) { return write_model(g, 0, out, len); }

int wt_onnx_write_by_reference(const wt_graph *g, uint8_t **out, size_t *len) {
  return write_model(g, 1, out, len);
}

/* refs: every external initializer (WT_VALUE_EXTERNAL with a reference) is written as its
 * reference, loaded or not; else only those held by reference are. */
static int write_model(const wt_graph *g, int refs, uint8_t **out, size_t *len) {
  writer w = {0};
  Onnx__ModelProto mp;
  Onnx__GraphProto gp;
  onnx__model_proto__init(&mp);
  onnx__graph_proto__init(&gp);
  mp.has_ir_version = 1;
  mp.ir_version = g->ir_version > 0 ? g->ir_version : 8;
  mp.producer_name = g->producer_name;
  mp.producer_version = g->producer_version;
  mp.graph = &gp;
  gp.name = g->name;

  Onnx__OperatorSetIdProto **opsets = wz(&w, sizeof *opsets * (size_t)(g->n_opsets + 1));
  for (int i = 0; opsets && i < g->n_opsets; i++) {
    Onnx__OperatorSetIdProto *o = wz(&w, sizeof *o);
    if (!o) break;
    onnx__operator_set_id_proto__init(o);
    o->domain = g->opsets[i].domain;
    o->has_version = 1;
    o->version = g->opsets[i].version;
    opsets[i] = o;
  }
  mp.n_opset_import = (size_t)g->n_opsets;
  mp.opset_import = opsets;

  int n_init = 0;
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i].flags & WT_VALUE_INITIALIZER) n_init++;
  Onnx__TensorProto **inits = wz(&w, sizeof *inits * (size_t)(n_init + 1));
  wt_const_tensor *cts = wz(&w, sizeof *cts * (size_t)(n_init + 1));
  for (int i = 0, k = 0; inits && cts && i < g->n_values; i++) {
    const wt_value *v = &g->values[i];
    if (!(v->flags & WT_VALUE_INITIALIZER)) continue;
    Onnx__TensorProto *tp = wz(&w, sizeof *tp);
    int64_t *dims = wz(&w, sizeof(int64_t) * WT_MAX_RANK);
    if (!tp || !dims) break;
    cts[k].name = v->name;
    cts[k].t.dtype = v->dtype;
    cts[k].t.rank = v->rank;
    if (v->rank > 0) memcpy(cts[k].t.dims, v->dims, sizeof *v->dims * (size_t)v->rank);
    cts[k].t.data = v->data;
    wt_tensor_to_proto(&cts[k], tp, dims);
    tp->doc_string = (char *)wt_lora_doc_of_mark(v); /* a LoRA adapter's mark (ir.h) */
    int by_ref = wt_value_unloaded(v) || (refs && (v->flags & WT_VALUE_EXTERNAL) && wt_graph_external(g, v->name));
    if (by_ref && !external_ref(&w, g, v, tp)) break;
    inits[k++] = tp;
  }
  gp.n_initializer = (size_t)n_init;
  gp.initializer = inits;

  Onnx__ValueInfoProto **ins = wz(&w, sizeof *ins * (size_t)(g->n_inputs + 1));
  for (int i = 0; ins && i < g->n_inputs; i++) ins[i] = value_info(&w, &g->values[g->inputs[i]]);
  gp.n_input = (size_t)g->n_inputs;
  gp.input = ins;
  Onnx__ValueInfoProto **outs = wz(&w, sizeof *outs * (size_t)(g->n_outputs + 1));
  for (int i = 0; outs && i < g->n_outputs; i++) outs[i] = value_info(&w, &g->values[g->outputs[i]]);
  gp.n_output = (size_t)g->n_outputs;
  gp.output = outs;
  /* value_info: the known types of intermediate values (shape hints for readers). */
  int n_vi = 0;
  for (int i = 0; i < g->n_values; i++) {
    const wt_value *v = &g->values[i];
    if (v->producer >= 0 && v->dtype != WT_UNDEFINED && v->rank >= 0 &&
        !(v->flags & (WT_VALUE_GRAPH_INPUT | WT_VALUE_GRAPH_OUTPUT | WT_VALUE_INITIALIZER)))
      n_vi++;
  }
  Onnx__ValueInfoProto **vis = wz(&w, sizeof *vis * (size_t)(n_vi + 1));
  for (int i = 0, k = 0; vis && i < g->n_values; i++) {
    const wt_value *v = &g->values[i];
    if (v->producer >= 0 && v->dtype != WT_UNDEFINED && v->rank >= 0 &&
        !(v->flags & (WT_VALUE_GRAPH_INPUT | WT_VALUE_GRAPH_OUTPUT | WT_VALUE_INITIALIZER)))
      vis[k++] = value_info(&w, v);
  }
  gp.n_value_info = (size_t)n_vi;
  gp.value_info = vis;
  Onnx__NodeProto **nodes = wz(&w, sizeof *nodes * (size_t)(g->n_nodes + 1));
  for (int i = 0; nodes && i < g->n_nodes; i++) nodes[i] = node_proto(&w, g, &g->nodes[i]);
  gp.n_node = (size_t)g->n_nodes;
  gp.node = nodes;

  int rc = WT_OK;
  *out = NULL;
  *len = 0;
  if (w.failed == 2) {
    rc = wt_errorf(WT_ERR_INTERNAL, "an initializer held by reference has no external data reference");
  } else if (w.failed) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory serializing the model");
  } else {
    size_t n = onnx__model_proto__get_packed_size(&mp);
    /* protobuf (ONNX Runtime, onnx) reads no message past 2 GiB: a big base's weights inside
     * would make a file nothing loads (and in wasm32 a second copy of them) */
    if ((uint64_t)n > WT_ONNX_FILE_MAX) {
      rc = wt_errorf(WT_ERR_INVALID_ARG, "the model with its weights inside would be %llu bytes (%llu "
                     "MiB), past the 2 GiB protobuf allows for one ONNX file; keep the weights in "
                     "external data (keepExternalData: true)", (unsigned long long)n,
                     (unsigned long long)(n >> 20));
      goto done;
    }
    *out = malloc(n ? n : 1);
    if (!*out) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory serializing the model (%zu bytes)", n);
    else *len = onnx__model_proto__pack(&mp, *out);
  }
done:
  for (int i = 0; i < w.n_blocks; i++) free(w.blocks[i]);
  free(w.blocks);
  return rc;
}

int wt_graph_clone_shared(const wt_graph *g, wt_graph **out) {
  uint8_t *bytes;
  size_t len;
  *out = NULL;
  WT_TRY(wt_onnx_write_by_reference(g, &bytes, &len));
  wt_onnx_read_opts opts = {.keep_external = 1, .share = g};
  int rc = wt_onnx_read(bytes, len, &opts, out);
  free(bytes);
  return rc;
}

int wt_graph_clone(const wt_graph *g, wt_graph **out) {
  uint8_t *bytes;
  size_t len;
  *out = NULL;
  WT_TRY(wt_onnx_write(g, &bytes, &len));
  wt_onnx_read_opts opts = {.keep_external = 1};
  int rc = wt_onnx_read(bytes, len, &opts, out);
  free(bytes);
  return rc;
}
