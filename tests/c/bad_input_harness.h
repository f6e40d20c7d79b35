/* The bad-input suite's shared harness (tests/bad_input/README.md): a per-case arena, protobuf-c
 * builders for hostile ONNX models, the valid base model they start from, helpers that read,
 * run, generate artifacts from and train such models, and the table runner each suite's main
 * calls:
 *   static const bad_case CASES[] = {{"model/empty", c_empty_model, WT_ERR_PARSE, "..."}, ...};
 *   int main(int argc, char **argv) { return bad_input_main(argc, argv, CASES, N); }
 * Everything a builder allocates (A, S) is freed after each case. */
#ifndef WT_TESTS_BAD_INPUT_HARNESS_H
#define WT_TESTS_BAD_INPUT_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "onnx.pb-c.h"
#include "webtrain.h"

/* ---- the per-case arena ------------------------------------------------------------------ */

void *A(size_t n);        /* zeroed; aborts when out of memory */
char *S(const char *s);   /* a copy of s */

/* ---- protobuf builders ------------------------------------------------------------------- */

/* A tensor value of rank `rank` (-1: no shape); params[i] non-NULL makes dim i symbolic. */
Onnx__ValueInfoProto *value_info(const char *name, int dtype, int rank, const int64_t *dims,
                                 const char *const *params);
/* A tensor with raw_data (data may be NULL: zeros). */
Onnx__TensorProto *tensor(const char *name, int dtype, int rank, const int64_t *dims,
                          const void *data);
Onnx__NodeProto *node(const char *op, const char *name, int n_in, const char *const *ins,
                      int n_out, const char *const *outs);
/* Appends an attribute to n (type 0: none set) and returns it. */
Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type);

/* Appends p to a protobuf-c pointer array (n, arr). */
#define PUSH(n, arr, p)                                                          \
  do {                                                                           \
    void *np_ = A(sizeof *(arr) * ((n) + 2));                                    \
    if (n) memcpy(np_, (arr), sizeof *(arr) * (n));                              \
    (arr) = np_;                                                                 \
    (arr)[(n)++] = (p);                                                          \
  } while (0)

typedef struct model {
  Onnx__ModelProto m;
  Onnx__GraphProto g;
  Onnx__OperatorSetIdProto op;
} model;

extern const float W_DATA[12];   /* the base model's W [4,3] */
extern const float B_DATA[3];    /* and B [3] */

/* The base model: Y[batch,3] = MatMul(X[batch,4], W[4,3]) + B[3]; valid and trainable. */
model *base_model(void);

/* ---- reading and running models ---------------------------------------------------------- */

uint8_t *pack(const model *b, size_t *len);
int read_model(const model *b);
/* Creates a session and runs it once on X (float [rows, cols] unless dtype/rank say otherwise). */
int run_model_x(const model *b, int dtype, int rank, const int64_t *dims, float fill);
int run_model(const model *b);   /* X float [2,4] of 0.5 */
/* Runs a model file: every declared input gets its declared shape (symbolic dims 2), float
 * inputs hold `fill`, the others zeros. */
int run_file(const char *path, float fill);

/* ---- artifacts and checkpoints ------------------------------------------------------------ */

extern wt_artifacts g_art;   /* of the base model: MSE + AdamW over W and B */

int gen(const model *b, const wt_artifacts_opts *o);
/* Artifacts of the base model (MSE + AdamW) with these requires_grad and frozen_params. */
int gen_with(const char *const *req, int n_req, const char *const *frozen, int n_frozen);
/* Reads checkpoint bytes both as a checkpoint and as a training state. */
int load_ckpt(const uint8_t *bytes, size_t len);
/* A copy of the generated checkpoint, to edit. */
uint8_t *ckpt_copy(size_t *len);
uint32_t rd32(const uint8_t *p);
void wr32(uint8_t *p, uint32_t v);
/* Where field `id` of the flatbuffer table at `table` is stored (0 when absent). */
uint32_t fb_field(const uint8_t *b, uint32_t table, int id);

/* ---- training ---------------------------------------------------------------------------- */

typedef struct train_run {
  wt_state *s;
  wt_module *m;
  wt_optimizer *o;
} train_run;

int open_run(train_run *r, const wt_artifacts *a);
void close_run(train_run *r);
/* One train step on x [rows,cols] of xfill (as dtype) and target [rows,3]. */
int train_step(train_run *r, int64_t rows, int64_t cols, float xfill, int dtype);

/* ---- the table --------------------------------------------------------------------------- */

typedef struct bad_case {
  const char *name;
  int (*fn)(void);
  int code;               /* expected status; WT_OK: must succeed */
  const char *expect;     /* substring of wt_last_error() */
} bad_case;

/* Generates g_art, then runs the cases whose name contains argv[1] (all without it; a filter
 * that matches none fails), printing "N bad-input cases, F failed" and each case's message
 * under WT_BAD_INPUT_VERBOSE. Returns main's exit status. */
int bad_input_main(int argc, char **argv, const bad_case *cases, int n_cases);

#endif
