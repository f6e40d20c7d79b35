/* LoRA adapters' marks (ir.h WT_VALUE_LORA_A / _B): what an ONNX doc_string says, and the role
 * of a value in a graph with or without marks. */
#include <string.h>

#include "ir/ir.h"

uint8_t wt_lora_mark_of_doc(const char *doc) {
  if (!doc) return 0;
  if (!strcmp(doc, WT_LORA_DOC_A)) return WT_VALUE_LORA_A;
  if (!strcmp(doc, WT_LORA_DOC_B)) return WT_VALUE_LORA_B;
  return 0;
}

const char *wt_lora_doc_of_mark(const wt_value *v) {
  if (v->flags & WT_VALUE_LORA_A) return WT_LORA_DOC_A;
  if (v->flags & WT_VALUE_LORA_B) return WT_LORA_DOC_B;
  return NULL;
}

int wt_graph_lora_marked(const wt_graph *g) {
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].flags & (WT_VALUE_LORA_A | WT_VALUE_LORA_B)) return 1;
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a > b && !strcmp(s + a - b, suffix);
}

int wt_value_lora_role(const wt_graph *g, int v, int marked) {
  const wt_value *val = &g->values[v];
  if (marked) return val->flags & (WT_VALUE_LORA_A | WT_VALUE_LORA_B);
  if (ends_with(val->name, ".lora_A")) return WT_VALUE_LORA_A;
  if (ends_with(val->name, ".lora_B")) return WT_VALUE_LORA_B;
  return 0;
}
