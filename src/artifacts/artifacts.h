/* Training artifact generation, following ONNX Runtime's generate_artifacts
 * (orttraining/.../training/artifacts.py): from a forward-only ONNX model, the training model
 * (forward + loss + gradients + InPlaceAccumulatorV2), the eval model, the optimizer model
 * and the checkpoint. Interchangeable with ONNX Runtime's artifacts (docs/api.md). */
#ifndef WT_ARTIFACTS_ARTIFACTS_H
#define WT_ARTIFACTS_ARTIFACTS_H

#include <stddef.h>
#include <stdint.h>

#include "io/onnx_scan.h"
#include "ir/ir.h"
#include "webtrain.h"   /* enum wt_loss_type, enum wt_optim_type */

typedef struct wt_loss_opts {
  int type;                     /* wt_loss_type; ignored when custom is set */
  const char *reduction;        /* "mean" (default), "sum", "none" */
  int has_ignore_index;         /* CrossEntropyLoss */
  int64_t ignore_index;
  const float *weight;          /* CE class weights [C] / BCE weights (broadcast to the output) */
  int64_t n_weight;
  const float *pos_weight;      /* BCE [C] */
  int64_t n_pos_weight;
  /* A custom loss already built into the forward graph (wt_generate_artifacts_graph): the name
   * of its scalar output. Its nodes were added with the IR builder (src/ir/ir.h); its target
   * inputs are graph inputs. Constants must be Constant nodes, not initializers, so they are
   * never taken for parameters. */
  const char *custom_value;
} wt_loss_opts;

typedef struct wt_optim_opts {
  int type;                     /* wt_optim_type */
  float beta1, beta2, eps, weight_decay;   /* AdamW; 0s mean ONNX Runtime's block defaults */
  int adam_mode;                /* default 1, like ONNX Runtime's generator */
  int no_bias_correction;
  float clip_max_norm;          /* > 0: InplaceClipGradNorm before the update */
  int has_betas, has_eps, has_weight_decay, has_adam_mode;
  float lr;                     /* > 0: the checkpoint's initial learning rate (webtrain's option) */
} wt_optim_opts;

/* LoRA adapters (lora.c): for each targeted MatMul/Gemm weight W, trainable W.lora_A [rank, in]
 * and W.lora_B [out, rank]; the base is frozen. */
typedef struct wt_lora_opts {
  int enabled;
  int64_t rank;                 /* >= 1 */
  float alpha;                  /* > 0; the adapters are scaled by alpha / rank */
  const char *const *targets;   /* parts of weight names (exact = 0) or whole names (exact = 1) */
  int n_targets;
  int exact;
  uint64_t seed;                /* the stream lora_A's Kaiming-uniform values are drawn from */
} wt_lora_opts;

typedef struct wt_artifacts_opts {
  const char *const *requires_grad;
  int n_requires_grad;
  const char *const *frozen_params;
  int n_frozen_params;
  wt_loss_opts loss;
  wt_optim_opts optimizer;
  const char *const *additional_output_names;
  int n_additional_outputs;
  const char *const *loss_input_names;
  int n_loss_inputs;
  int nominal_checkpoint;       /* also produce a nominal checkpoint */
  int ort_format;               /* rejected: not supported */
  const char *custom_op_library;  /* rejected: not supported */
  wt_lora_opts lora;
  int frozen_dtype;             /* 0: frozen weights as they are; WT_FLOAT16: float32 ones stored as
                                   float16 where only GEMM inputs and Gather read them (half.c) */
  /* location non-NULL: the model is the skeleton of a file holding its weights inside (see
   * io/onnx_scan.h); the training and eval models refer to that file and carry its fingerprint,
   * so that a module created from them refuses a file changed since. */
  wt_base_print base;
} wt_artifacts_opts;

typedef struct wt_bytes {
  uint8_t *data;
  size_t len;
} wt_bytes;

typedef struct wt_artifacts {
  wt_bytes training_model, eval_model, optimizer_model, checkpoint, nominal_checkpoint;
  /* frozen_dtype: the frozen float32 weights kept float32, a line "name: why" each (NULL: none) */
  char *frozen_kept;
} wt_artifacts;

int wt_generate_artifacts(const uint8_t *model, size_t len, const wt_artifacts_opts *opts,
                          wt_artifacts *out);
/* The same from a forward graph the caller may have extended with a custom loss; g is consumed
 * (freed, even on error). */
int wt_generate_artifacts_graph(wt_graph *g, const wt_artifacts_opts *opts, wt_artifacts *out);
void wt_artifacts_free(wt_artifacts *a);

/* One built-in loss on value `input` of g, as a building block (the JS onnxblock loss blocks):
 * the target input `target` (NULL: "labels" / "target") is added shaped like the input, or
 * reused if g already has it. *loss_value receives the loss value. */
int wt_artifacts_loss_block(wt_graph *g, int type, const char *input, const char *target,
                            const wt_loss_opts *o, int *loss_value);

/* LoRA (lora.c, lora_export.c). With o->lora.enabled: inserts the adapters into g and fills *d
 * with o's options, the adapters added to requires_grad and every other float initializer to
 * frozen_params; *owned holds the names (wt_artifacts_lora_free once generation is done). */
int wt_artifacts_lora(wt_graph *g, const wt_artifacts_opts *o, wt_artifacts_opts *d, char ***owned);
void wt_artifacts_lora_free(char **owned);
/* How the MatMul/Gemm nodes of g multiply by weight w: *oi 1 when w is stored [out, in], 0 for
 * [in, out]; an error naming w when it is no (consistently used) MatMul/Gemm matrix operand. */
int wt_lora_weight_layout(const wt_graph *g, int w, int *oi, int64_t *in, int64_t *out);
/* How node n multiplies by its input `operand`: 1 as [out, in] (W·x), 0 as [in, out] (x·W), -1
 * when it is no MatMul/Gemm matrix operand. */
int wt_lora_operand_view(const wt_node *n, int operand);
/* 1 when v is a float initializer that some MatMul/Gemm multiplies by (directly or through a
 * Transpose): what a LoRA target may name. */
int wt_lora_is_matmul_weight(const wt_graph *g, int v);
/* On an inference graph holding the adapters as initializers (an exported eval model): folds
 * each W + (alpha/rank)·B·A into W and removes the adapter branches: plain ONNX. */
int wt_lora_merge(wt_graph *g);
/* On the same: the base model taking the adapters as inputs, [lora_rank, in] and [out,
 * lora_rank] (zero-rank tensors give the base model). *params (malloc'd, wt_lora_params_free)
 * receives the adapters' names and values. */
int wt_lora_adapter_model(wt_graph *g, wt_const_tensor **params, int *n_params);
void wt_lora_params_free(wt_const_tensor *params, int n);

/* Internal steps, one file each in src/artifacts. */
int wt_artifacts_add_loss(wt_graph *g, const wt_artifacts_opts *o, int *loss_value);
/* The eval model: g in inference mode, outputting after g's outputs (the loss, the additional
 * outputs) the values named forward[0..n_forward) that are not among them (the model's outputs:
 * metrics and predictions read them without additional_output_names). */
int wt_artifacts_eval_model(const wt_graph *g, const char *const *forward, int n_forward, wt_bytes *out);
/* The training model's fusions (see fuse.c); prunes what they leave dead. */
int wt_artifacts_fuse_gelu(wt_graph *g);
/* frozen_dtype float16 on the forward graph (shapes inferred): every float32 initializer not in
 * trainable[] that only GEMM inputs and Gather read becomes float16 behind a Cast to float (one
 * read only through a 2-D Transpose into them is transposed first: that value replaces it, in
 * frozen[] too); *kept (malloc'd, NULL when empty) names the others and why. */
int wt_artifacts_frozen_half(wt_graph *g, const int *trainable, int n_tr, int *frozen, int n_fr,
                             char **kept);
int wt_artifacts_optimizer_model(const wt_graph *train, const int *params, int n_params,
                                 const wt_optim_opts *o, wt_bytes *out);

#endif
