/* A backend: how the ops of a plan run on one kind of device. What an op means (its inputs,
 * attributes, shapes, gradient rule) is its definition, one for all backends (ops/op.h); how a
 * backend runs it is that backend's kernel, in the backend's own folder (src/backend/<name>/)
 * and its own type (the CPU's: backend/cpu/kernel.h). The planner looks a node's kernel up by
 * its op; an op a backend lacks is named before anything runs (wt_plan_missing_kernels).
 *
 * Every backend's kernel entry starts with a wt_kernel_key naming the op it runs, and each
 * family of kernels is one array of entries ending in a zeroed one; wt_kernel_tables finds an
 * entry among all of a backend's families. Adding a backend is a folder with its kernel type,
 * its families' tables, a wt_kernel_tables over them and its wt_backend. */
#ifndef WT_BACKEND_BACKEND_H
#define WT_BACKEND_BACKEND_H

#include <stddef.h>

#include "ops/op.h"

/* The op a kernel runs: its definition's domain ("" for ai.onnx) and op_type. */
typedef struct wt_kernel_key {
  const char *domain;
  const char *op_type;
} wt_kernel_key;

typedef struct wt_backend {
  const char *name;              /* "cpu" ... as errors name it */
  /* The backend's kernel for op (its own kernel type), NULL when it has none. */
  const void *(*kernel)(const wt_op_def *op);
  /* Calls fn with every kernel's key. */
  void (*each)(void (*fn)(const wt_kernel_key *key, void *user), void *user);
  /* The optimizer step's updates over parameters in this backend's memory (backend/optim.h). */
  const struct wt_backend_optim *optim;
} wt_backend;

/* A backend's kernel tables for lookup. tables[f] is family f's array of entries, `stride`
 * bytes apart, each starting with its wt_kernel_key, ending in an entry whose op_type is NULL.
 * Lookup is a scan (a few hundred keys, asked once per node at plan time): no index is built,
 * so a backend holds no state that changes. */
typedef struct wt_kernel_tables {
  const void *const *tables;
  int n_tables;
  size_t stride;
} wt_kernel_tables;

/* The entry running (domain, op_type), or NULL. */
const void *wt_kernel_tables_find(const wt_kernel_tables *kt, const char *domain,
                                  const char *op_type);
/* Calls fn with every entry's key, family by family in table order. */
void wt_kernel_tables_each(const wt_kernel_tables *kt,
                           void (*fn)(const wt_kernel_key *key, void *user), void *user);

#endif
