/* webtrain's graph IR: values (named tensors: inputs, initializers, intermediates), nodes with
 * attributes, opset imports. Read from ONNX once (src/io), transformed (autodiff, artifacts),
 * written back to ONNX, and planned for execution (src/runtime).
 *
 * Values and nodes are referred to by index; -1 is "no value" (an omitted optional input).
 * The graph owns every string and every initializer's bytes. */
#ifndef WT_IR_IR_H
#define WT_IR_IR_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "base/tensor.h"

typedef enum wt_attr_type {
  WT_ATTR_UNDEFINED = 0,
  WT_ATTR_FLOAT = 1,
  WT_ATTR_INT = 2,
  WT_ATTR_STRING = 3,
  WT_ATTR_TENSOR = 4,
  WT_ATTR_GRAPH = 5,
  WT_ATTR_FLOATS = 6,
  WT_ATTR_INTS = 7,
  WT_ATTR_STRINGS = 8,
  WT_ATTR_TENSORS = 9,
  WT_ATTR_GRAPHS = 10
} wt_attr_type;

/* A constant tensor with owned data (initializers, tensor attributes). */
typedef struct wt_const_tensor {
  char *name;
  wt_tensor t;                  /* t.data owned (malloc), NULL when nbytes == 0 */
} wt_const_tensor;

/* One attribute: the member of the union its type names holds the value (read others never). */
typedef struct wt_attr {
  char *name;
  wt_attr_type type;
  int n;                        /* count for FLOATS / INTS / STRINGS */
  size_t s_len;                 /* STRING: its bytes */
  union {
    float f;                    /* FLOAT */
    int64_t i;                  /* INT */
    char *s;                    /* STRING: NUL-terminated, s_len bytes */
    wt_const_tensor *t;         /* TENSOR */
    float *floats;              /* FLOATS */
    int64_t *ints;              /* INTS */
    char **strings;             /* STRINGS */
  };
} wt_attr;

enum wt_value_flags {
  WT_VALUE_GRAPH_INPUT = 1u << 0,
  WT_VALUE_GRAPH_OUTPUT = 1u << 1,
  WT_VALUE_INITIALIZER = 1u << 2,
  WT_VALUE_SEQUENCE = 1u << 3,    /* a sequence of tensors of `dtype` (optimizer models) */
  /* An initializer stored in an external data file (its reference: wt_graph_external). Its
   * `data` may be NULL with `nbytes` set: held by reference only, not loaded (artifact
   * generation keeps a frozen base's weights so, and writes the reference back). */
  WT_VALUE_EXTERNAL = 1u << 4,
  /* `data` is another graph's (a module's eval model shares its training model's frozen
   * weights): never freed, moved or written to through this graph. */
  WT_VALUE_BORROWED = 1u << 5,
  /* A LoRA adapter's A [rank, in] or B [out, rank], marked by artifacts/lora.c when it inserts
   * them (their names do not tell: a model may have a weight of its own named "x.lora_A"). An
   * ONNX file carries the mark as the initializer's or graph input's doc_string
   * (WT_LORA_DOC_A / _B), so it survives the artifacts' files and the models exported from them;
   * wt_value_lora_role reads it. */
  WT_VALUE_LORA_A = 1u << 6,
  WT_VALUE_LORA_B = 1u << 7
};

#define WT_LORA_DOC_A "webtrain: LoRA adapter A"
#define WT_LORA_DOC_B "webtrain: LoRA adapter B"

/* Initializers up to this size are packed into a graph's block by compaction (moved); bigger
 * ones (weights) stay where they are, so another graph may borrow them. */
#define WT_PACK_DATA_MAX 4096

/* A value's declared type: rank -1 unknown; dims[i] >= 0 fixed, -1 symbolic (dim_param[i]
 * names it, or is NULL: unknown). The shape is stored apart from the value (most values of a
 * loaded training graph carry none): set it with wt_value_set_shape / wt_value_copy_type. */
typedef struct wt_value {
  char *name;
  int64_t *dims;                /* rank entries; NULL when rank <= 0 */
  char **dim_param;             /* NULL (no dim named), or rank entries */
  void *data;                   /* initializer bytes (owned unless WT_VALUE_BORROWED), else NULL */
  size_t nbytes;
  int producer;                 /* node index, -1 for inputs/initializers */
  int8_t dtype;                 /* ONNX TensorProto.DataType; 0 unknown */
  int8_t rank;                  /* -1 unknown, else <= WT_MAX_RANK */
  uint8_t flags;                /* wt_value_flags */
} wt_value;

typedef struct wt_node {
  char *name;
  char *op_type;
  char *domain;                 /* "" for the default ai.onnx domain */
  int n_inputs, n_outputs, n_attrs;
  int *inputs;                  /* value indices, -1 for an omitted optional input */
  int *outputs;
  wt_attr *attrs;
} wt_node;

typedef struct wt_opset {
  char *domain;
  int64_t version;
} wt_opset;

typedef struct wt_graph {
  char *name;
  int64_t ir_version;
  char *producer_name;
  char *producer_version;
  wt_value *values;
  int n_values, cap_values;
  wt_node *nodes;
  int n_nodes, cap_nodes;
  int *inputs;                  /* graph inputs in order (never initializers) */
  int n_inputs;
  int *outputs;
  int n_outputs;
  wt_opset *opsets;
  int n_opsets;
  /* Strings and small arrays of values, nodes and attributes packed into one block after loading
   * (wt_graph_shrink): never freed or reallocated one by one (wt_graph_release). */
  uint8_t *slab;
  size_t slab_bytes;
  /* Where the WT_VALUE_EXTERNAL initializers' bytes are (src/ir/external.c), by value name. */
  struct wt_external_init *ext;
  int n_ext;
} wt_graph;

/* An initializer's place in an external data file: `location` relative to the model's
 * directory, at byte `offset` (its length is the value's nbytes). */
typedef struct wt_external_init {
  char *name;
  char *location;
  uint64_t offset;
} wt_external_init;

wt_graph *wt_graph_new(void);
void wt_graph_free(wt_graph *g);
/* Packs a built graph for a long life (a loaded graph is kept for the module's): the value and
 * node arrays to their counts, and the strings (each distinct one once) and small arrays of
 * values, nodes and attributes into one block, allocated after the loader's temporaries are
 * gone. The graph stays fully usable and changeable. Out of memory leaves it as it was. */
void wt_graph_shrink(wt_graph *g);
/* Frees p, a string or array owned by g, unless it lies in g's slab (freed with the graph).
 * IR code frees and reallocates the graph's pieces only through this and its helpers. */
void wt_graph_release(const wt_graph *g, void *p);
/* Renames value v / node `node` (copied); replaces a node's op type and domain; sets its output
 * count (new outputs -1: omitted). WT_OK or WT_ERR_NO_MEMORY. */
WT_NODISCARD int wt_value_set_name(wt_graph *g, int v, const char *name);
WT_NODISCARD int wt_node_set_name(wt_graph *g, int node, const char *name);
WT_NODISCARD int wt_node_set_op(wt_graph *g, int node, const char *op_type, const char *domain);
WT_NODISCARD int wt_node_set_n_outputs(wt_graph *g, int node, int n);
/* Frees what node n owns and zeroes it. */
void wt_node_clear(const wt_graph *g, wt_node *n);
/* Removes attribute `name` of the node, if it has one. */
void wt_node_remove_attr(wt_graph *g, int node, const char *name);

/* Sets value v's rank (-1: unknown) and dims (>= 0 fixed, -1 symbolic; NULL: all -1); the dims'
 * names are cleared. WT_OK or WT_ERR_NO_MEMORY. */
WT_NODISCARD int wt_value_set_shape(wt_graph *g, int v, int rank, const int64_t *dims);
/* Names symbolic dim d of value v (copied; NULL: unknown). */
WT_NODISCARD int wt_value_set_dim_param(wt_graph *g, int v, int d, const char *name);
/* Gives value v of g the dtype, rank, dims and dim names of value src of graph sg, without axis
 * `drop` when 0 <= drop < its rank (-1: all axes). */
WT_NODISCARD int wt_value_copy_type(wt_graph *g, int v, const wt_graph *sg, int src, int drop);
/* The name of value v's symbolic dim d, or NULL. */
static inline const char *wt_value_dim_param(const wt_value *v, int d) {
  return v->dim_param ? v->dim_param[d] : NULL;
}

/* Room for n_values values and n_nodes nodes in all (a reader that knows the counts avoids the
 * arrays' doubling). WT_OK or WT_ERR_NO_MEMORY. */
WT_NODISCARD int wt_graph_reserve(wt_graph *g, int n_values, int n_nodes);
/* Adds a value with this name (copied) or returns the existing one. Returns its index or -1 (no memory).
 * For readers resolving names; code that creates a value uses one of the two below. */
WT_NODISCARD int wt_graph_value(wt_graph *g, const char *name);
/* Adds a new value with exactly this name: -1 when the graph already has one (the caller says
 * which name clashed and what to rename) or out of memory (message set). */
WT_NODISCARD int wt_graph_add_value(wt_graph *g, const char *name);
/* Adds a new value named `name`, or, when that is taken, `name` with the first free suffix
 * "_1", "_2" ...: for names a transformation makes up. Returns its index, -1 when out of memory. */
WT_NODISCARD int wt_graph_fresh_value(wt_graph *g, const char *name);
/* Looks a value up by name; -1 when absent. */
int wt_graph_find(const wt_graph *g, const char *name);
/* Appends a node (strings copied, inputs/outputs are value indices). Returns its index or -1. */
WT_NODISCARD int wt_graph_add_node(wt_graph *g, const char *op_type, const char *domain, const char *name,
                      int n_inputs, const int *inputs, int n_outputs, const int *outputs);
/* Attribute builders on node `node` (copied). Return WT_OK or WT_ERR_NO_MEMORY. */
WT_NODISCARD int wt_node_set_int(wt_graph *g, int node, const char *name, int64_t v);
WT_NODISCARD int wt_node_set_float(wt_graph *g, int node, const char *name, float v);
WT_NODISCARD int wt_node_set_ints(wt_graph *g, int node, const char *name, const int64_t *v, int n);
WT_NODISCARD int wt_node_set_string(wt_graph *g, int node, const char *name, const char *s);
wt_attr *wt_node_add_attr(wt_graph *g, int node, const char *name, wt_attr_type type);
/* Adds the input/output to the graph's lists. */
WT_NODISCARD int wt_graph_add_input(wt_graph *g, int value);
WT_NODISCARD int wt_graph_add_output(wt_graph *g, int value);
/* Sets the opset version of `domain` ("" = ai.onnx); 0 when not imported. */
WT_NODISCARD int wt_graph_set_opset(wt_graph *g, const char *domain, int64_t version);
int64_t wt_graph_opset(const wt_graph *g, const char *domain);

/* Attribute lookup on a node; NULL when absent. */
const wt_attr *wt_node_attr(const wt_node *n, const char *name);
/* The value of v when the graph fixes it: an initializer, or the output of a Constant node
 * (value, value_float(s), value_int(s)). Fills *out, data pointing into the graph; returns 0
 * when v is no such constant. */
int wt_graph_const_value(const wt_graph *g, int v, wt_tensor *out);
int64_t wt_attr_int(const wt_node *n, const char *name, int64_t dflt);
float wt_attr_float(const wt_node *n, const char *name, float dflt);
/* Returns the string or dflt. */
const char *wt_attr_string(const wt_node *n, const char *name, const char *dflt);
/* Returns the count (or -1 when absent) and points *out at the ints. */
int wt_attr_ints(const wt_node *n, const char *name, const int64_t **out);
int wt_attr_floats(const wt_node *n, const char *name, const float **out);

/* Recomputes producer indices and checks that every node input is produced before use
 * (graph inputs, initializers, earlier nodes), reordering nodes topologically if needed.
 * Errors name the node and the missing value. */
WT_NODISCARD int wt_graph_toposort(wt_graph *g);

/* Records that initializer `name` lives at `offset` of external file `location` (copied; an
 * earlier record of the name is replaced). WT_OK or WT_ERR_NO_MEMORY. */
WT_NODISCARD int wt_graph_set_external(wt_graph *g, const char *name, const char *location,
                                       uint64_t offset);
/* The external reference of initializer `name`, or NULL. */
const wt_external_init *wt_graph_external(const wt_graph *g, const char *name);
/* Whether value v is an initializer held by reference only (external, bytes not loaded). */
static inline int wt_value_unloaded(const wt_value *v) {
  return (v->flags & WT_VALUE_INITIALIZER) && !v->data && v->nbytes > 0;
}
/* The LoRA adapter mark of a value (WT_VALUE_LORA_A / _B, or 0) from an ONNX doc_string (NULL
 * is fine), and the doc_string of a value's mark (NULL: none). */
uint8_t wt_lora_mark_of_doc(const char *doc);
const char *wt_lora_doc_of_mark(const wt_value *v);
/* Whether any value of g bears a LoRA mark: pass it to wt_value_lora_role. */
int wt_graph_lora_marked(const wt_graph *g);
/* Value v's LoRA role: WT_VALUE_LORA_A, WT_VALUE_LORA_B or 0. marked (wt_graph_lora_marked):
 * the mark decides. A graph none of whose values is marked gets the role its names give
 * ("<weight>.lora_A" / ".lora_B", what artifacts/lora.c names them): ONNX files written without
 * the marks (adapters inserted by another tool, or a model whose doc strings a tool dropped)
 * keep their adapters, and such a graph has no marks to contradict the names. */
int wt_value_lora_role(const wt_graph *g, int v, int marked);
/* Drops value v's bytes: frees them unless borrowed; data NULL, nbytes 0, not borrowed. */
void wt_value_drop_data(const wt_graph *g, wt_value *v);
/* Frees the graph's external references (wt_graph_free does). */
void wt_graph_free_external(wt_graph *g);

/* Removes the nodes no graph output depends on, and initializers left unread. */
WT_NODISCARD int wt_graph_prune(wt_graph *g);

/* Copies a string into a new malloc'd NUL-terminated buffer (NULL -> ""). */
char *wt_strdup(const char *s);
char *wt_strndup(const char *s, size_t n);
void wt_attr_clear(const wt_graph *g, wt_attr *a);
void wt_const_tensor_free(wt_const_tensor *t);

/* A value's declared shape for messages: "[batch,784]" ('?' for unknown dims). Returns buf. */
char *wt_value_shape_str(const wt_value *v, char *buf, size_t cap);

/* "Conv node 'conv1'" style label for messages; returns a static buffer (valid until next call). */
const char *wt_node_label(const wt_node *n);

#endif
