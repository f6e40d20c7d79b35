/* webtrain public C API.
 *
 * Conventions: every fallible function returns an int status (0 = WT_OK) and on failure
 * wt_last_error() returns a message naming what was wrong (op, node, tensor, file) and what was
 * expected. Nothing aborts the process. Handles are opaque; each `_create` has a `_free`.
 * Pointers passed in are borrowed for the duration of the call unless stated otherwise;
 * pointers returned stay valid until the next call on the same handle or its `_free`.
 * Element types are ONNX TensorProto codes (wt_dtype).
 * The enums below are the numbers that cross to JavaScript: js/abi.js mirrors them, and
 * tests/js/abi.test.mjs fails when the two disagree. */
#ifndef WEBTRAIN_H
#define WEBTRAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBTRAIN_VERSION "0.1.0"

/* Status codes: every fallible function returns one (WT_OK == 0). */
enum wt_status {
  WT_OK = 0,
  WT_ERR_INVALID_ARG = 1,   /* caller passed something malformed */
  WT_ERR_PARSE = 2,         /* model / tensor / checkpoint bytes are malformed */
  WT_ERR_UNSUPPORTED = 3,   /* valid ONNX that webtrain does not implement */
  WT_ERR_SHAPE = 4,         /* shape or dtype mismatch */
  WT_ERR_NO_MEMORY = 5,
  WT_ERR_IO = 6,
  WT_ERR_RUNTIME = 7,       /* data-dependent failure while running (index out of range ...) */
  WT_ERR_INTERNAL = 8
};

/* Element types webtrain computes with: ONNX TensorProto.DataType codes, so they cross the file
 * format as is. */
typedef enum wt_dtype {
  WT_UNDEFINED = 0,
  WT_FLOAT = 1,
  WT_INT32 = 6,
  WT_INT64 = 7,
  WT_BOOL = 9,
  WT_FLOAT16 = 10           /* storage only: frozen weights, widened to float where read */
} wt_dtype;

/* Built-in losses and optimizers of artifact generation: ONNX Runtime's LossType / OptimType
 * numbering. */
enum wt_loss_type { WT_LOSS_TYPE_NONE = 0, WT_LOSS_TYPE_MSE = 1, WT_LOSS_TYPE_CE = 2, WT_LOSS_TYPE_BCE = 3, WT_LOSS_TYPE_L1 = 4 };
enum wt_optim_type { WT_OPTIM_NONE = 0, WT_OPTIM_ADAMW = 1, WT_OPTIM_SGD = 2 };

/* A module's graphs (the `eval` argument of the wt_module_* functions): training, eval, and the
 * eval graph pruned to forward outputs (wt_module_predict_outputs). */
enum wt_module_mode { WT_MODE_TRAIN = 0, WT_MODE_EVAL = 1, WT_MODE_PREDICT = 2 };

/* Types of checkpoint properties (wt_state_property_type). */
enum wt_property_type { WT_PROPERTY_INT = 1, WT_PROPERTY_FLOAT = 2, WT_PROPERTY_STRING = 3 };

typedef struct wt_session wt_session;

const char *wt_last_error(void);
/* Which vector path the kernels were built with: "wasm-simd128", "gnu-vector-128" or "scalar". */
const char *wt_simd_name(void);

/* Threads the kernels use (docs/architecture.md): n <= 0 asks for the cores the platform reports
 * (at most 8); n is clamped to 16. Returns the count in effect: 1 in a single-threaded build.
 * Natively the default is the environment variable WT_THREADS (else n = 0). Results are
 * bit-identical at any count. Not to be called while a step runs on another thread. */
int32_t wt_set_threads(int32_t n);
int32_t wt_get_threads(void);

/* An inference session over an ONNX model (bytes are copied; external data is not available
 * from bytes — use wt_session_create_from_file natively). */
int wt_session_create(const uint8_t *model, size_t len, wt_session **out);
int wt_session_create_from_file(const char *path, wt_session **out);
void wt_session_free(wt_session *s);

int32_t wt_session_input_count(const wt_session *s);
int32_t wt_session_output_count(const wt_session *s);
/* Names and declared types of inputs/outputs; dims < 0 are symbolic (dim name via *_dim_param). */
const char *wt_session_input_name(const wt_session *s, int32_t index);
const char *wt_session_output_name(const wt_session *s, int32_t index);
int32_t wt_session_input_dtype(const wt_session *s, int32_t index);
int32_t wt_session_input_rank(const wt_session *s, int32_t index);
int64_t wt_session_input_dim(const wt_session *s, int32_t index, int32_t axis);

/* Sets input `index` for the next run. `data` is borrowed: it must stay valid and unchanged
 * until wt_session_run returns. */
int wt_session_set_input(wt_session *s, int32_t index, int32_t dtype, int32_t rank,
                         const int64_t *dims, const void *data);
/* Runs the model on the inputs set. The plan for these input shapes is built on first use and
 * cached; a run itself allocates nothing. */
int wt_session_run(wt_session *s);
/* Output `index` of the last run: dtype, rank, dims and data stay valid until the next run. */
int wt_session_output(const wt_session *s, int32_t index, int32_t *dtype, int32_t *rank,
                      const int64_t **dims, const void **data);
/* Bytes of activations the cached plans are laid out for (summed over plans; the plans share
 * one arena, whose size the runtime reports as its capacity in memory statistics). */
size_t wt_session_arena_bytes(const wt_session *s);


/* ---- artifact generation -------------------------------------------------------------------
 * ONNX Runtime's generate_artifacts (onnxruntime.training.artifacts): from a forward-only ONNX
 * model, the training model (forward, loss, gradients), the eval model, the optimizer model and
 * the checkpoint, interchangeable with the ones ONNX Runtime generates. */

/* The options of artifact generation; zero-initialize, then set what is needed. */
typedef struct wt_artifact_options {
  /* The parameters to train; NULL (n 0): every float initializer, as ONNX Runtime does. An
   * unknown name is an error naming the closest initializer. */
  const char *const *requires_grad;
  int32_t n_requires_grad;
  /* Parameters kept in the checkpoint but not trained. */
  const char *const *frozen_params;
  int32_t n_frozen_params;
  /* A wt_loss_type on the model's first output; WT_LOSS_TYPE_NONE: that output is the loss. */
  int32_t loss;
  /* The loss's reduction: NULL or "mean" (the default), "sum" or "none". */
  const char *loss_reduction;
  /* A wt_optim_type; WT_OPTIM_NONE: no optimizer model. */
  int32_t optimizer;
  /* > 0: the learning rate stored in the checkpoint; 0: none stored. */
  float learning_rate;
  /* Outputs of the model the training and eval models also return, beside the loss. */
  const char *const *additional_output_names;
  int32_t n_additional_outputs;
  /* Non-zero: also a nominal checkpoint (the parameters' names and shapes, no values). */
  int32_t nominal_checkpoint;
} wt_artifact_options;

/* The generated artifacts (wt_artifacts_generate); each is ONNX Runtime's file format. */
typedef struct wt_artifacts_out wt_artifacts_out;
enum wt_artifact {
  WT_ARTIFACT_TRAINING_MODEL = 0,     /* training_model.onnx */
  WT_ARTIFACT_EVAL_MODEL = 1,         /* eval_model.onnx */
  WT_ARTIFACT_OPTIMIZER_MODEL = 2,    /* optimizer_model.onnx (none with WT_OPTIM_NONE) */
  WT_ARTIFACT_CHECKPOINT = 3,         /* checkpoint */
  WT_ARTIFACT_NOMINAL_CHECKPOINT = 4  /* nominal_checkpoint (with nominal_checkpoint set) */
};

/* Generates the artifacts of a model (bytes: its external data, if any, cannot be read; use
 * wt_artifacts_generate_from_file). o may be NULL (every float initializer trained, the model's
 * output the loss, no optimizer). */
int wt_artifacts_generate(const uint8_t *model, size_t len, const wt_artifact_options *o,
                          wt_artifacts_out **out);
/* The same from a model file; external data is read relative to its directory. */
int wt_artifacts_generate_from_file(const char *path, const wt_artifact_options *o,
                                    wt_artifacts_out **out);
/* Artifact `which` (a wt_artifact): its bytes (valid until wt_artifacts_out_free), NULL with
 * *len 0 for one not generated. */
const uint8_t *wt_artifacts_out_bytes(const wt_artifacts_out *a, int32_t which, size_t *len);
void wt_artifacts_out_free(wt_artifacts_out *a);


/* ---- training ------------------------------------------------------------------------------
 * The on-device training API of ONNX Runtime (CheckpointState, Module, Optimizer,
 * LinearLRScheduler), in C. Parameters, gradients and optimizer moments live in the state and
 * are shared by the training, eval and optimizer graphs without copies. */

typedef struct wt_state wt_state;
typedef struct wt_module wt_module;
typedef struct wt_optimizer wt_optimizer;

/* Checkpoint state from checkpoint bytes (ONNX Runtime's ODTC flatbuffer, versions 1 and 2). */
int wt_state_load(const uint8_t *bytes, size_t len, wt_state **out);
/* Serializes the state (version 2); *out is malloc'd, free with wt_free. */
int wt_state_save(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len);
void wt_state_free(wt_state *s);
void wt_free(void *p);

int32_t wt_state_param_count(const wt_state *s);
/* Index of the parameter with this name, -1 when absent. */
int32_t wt_state_param_index(const wt_state *s, const char *name);
const char *wt_state_param_name(const wt_state *s, int32_t i);
int32_t wt_state_param_requires_grad(const wt_state *s, int32_t i);
int32_t wt_state_param_rank(const wt_state *s, int32_t i);
int64_t wt_state_param_dim(const wt_state *s, int32_t i, int32_t axis);
/* The parameter's float data and its gradient buffer (NULL for frozen parameters or before a
 * module exists). Valid until the state is freed. */
float *wt_state_param_data(const wt_state *s, int32_t i);
float *wt_state_param_grad(const wt_state *s, int32_t i);
/* Replaces a parameter's values (count must match). */
int wt_state_param_update(wt_state *s, int32_t i, const float *data, int64_t count);
/* Total element count of the (trainable) parameters; contiguous copies in state order. */
int64_t wt_state_params_size(const wt_state *s, int32_t trainable_only);
int wt_state_params_copy_to(const wt_state *s, int32_t trainable_only, float *dst, int64_t count);
int wt_state_params_copy_from(wt_state *s, int32_t trainable_only, const float *src, int64_t count);

/* Properties (int64, float, string) kept in the checkpoint's property bag. */
int wt_state_set_int_property(wt_state *s, const char *name, int64_t v);
int wt_state_set_float_property(wt_state *s, const char *name, float v);
int wt_state_set_string_property(wt_state *s, const char *name, const char *v);
int32_t wt_state_property_count(const wt_state *s);
const char *wt_state_property_name(const wt_state *s, int32_t i);
/* A wt_property_type (0 when i is out of range). */
int32_t wt_state_property_type(const wt_state *s, int32_t i);
int64_t wt_state_property_int(const wt_state *s, int32_t i);
float wt_state_property_float(const wt_state *s, int32_t i);
const char *wt_state_property_string(const wt_state *s, int32_t i);

/* A module over the training model and (optionally, eval may be NULL) the eval model. */
int wt_module_create(wt_state *s, const uint8_t *train, size_t train_len, const uint8_t *eval,
                     size_t eval_len, wt_module **out);
/* The same taking train and eval (malloc'd; eval may be NULL), each freed as soon as it is
 * parsed (also on error), so that the module's graphs can reuse their room. */
int wt_module_create_owned(wt_state *s, uint8_t *train, size_t train_len, uint8_t *eval,
                           size_t eval_len, wt_module **out);
/* Gives a module created without one its eval model (eval malloc'd, taken and freed once parsed):
 * copying the eval model in only now lets its graph take the room the training model's loading
 * left. */
int wt_module_add_eval_owned(wt_module *m, uint8_t *eval, size_t eval_len);
void wt_module_free(wt_module *m);
/* The user inputs (model inputs and targets) and user outputs (loss and extras), by mode
 * (`eval`: a wt_module_mode). */
int32_t wt_module_input_count(const wt_module *m, int32_t eval);
const char *wt_module_input_name(const wt_module *m, int32_t eval, int32_t i);
/* Declared element type of user input i (ONNX code), 0 when unknown. */
int32_t wt_module_input_dtype(const wt_module *m, int32_t eval, int32_t i);
int32_t wt_module_output_count(const wt_module *m, int32_t eval);
const char *wt_module_output_name(const wt_module *m, int32_t eval, int32_t i);
int wt_module_set_input(wt_module *m, int32_t eval, int32_t i, int32_t dtype, int32_t rank,
                        const int64_t *dims, const void *data);
/* One forward + backward pass; gradients accumulate unless reset (lazy_reset_grad). */
int wt_module_train_step(wt_module *m);
int wt_module_eval_step(wt_module *m);
/* Output i of the last step of that mode (see wt_session_output). */
int wt_module_output(const wt_module *m, int32_t eval, int32_t i, int32_t *dtype, int32_t *rank,
                     const int64_t **dims, const void **data);
/* The next train step overwrites the gradient buffers instead of adding to them. */
int wt_module_lazy_reset_grad(wt_module *m);
/* Forward-only runs on the current parameters (WT_MODE_PREDICT: no labels, no loss): the eval
 * graph pruned to output_names, built when they differ from the last call's, its plans in the
 * module's activation arena. Inputs through wt_module_set_input, outputs wt_module_output. */
int wt_module_predict_outputs(wt_module *m, const char *const *output_names, int32_t n_outputs);
int wt_module_predict_step(wt_module *m);
/* A plain ONNX inference model: the eval graph without the loss, the chosen outputs, the
 * current parameters as initializers. *out malloc'd (wt_free). */
int wt_module_export_for_inference(const wt_module *m, const char *const *output_names,
                                   int32_t n_outputs, uint8_t **out, size_t *len);
/* The same; by_reference: initializers the model read from external data files (a frozen base's
 * weights) are written as references to the same file ranges, not their bytes. */
int wt_module_export_for_inference_ext(const wt_module *m, const char *const *output_names,
                                       int32_t n_outputs, int32_t by_reference, uint8_t **out,
                                       size_t *len);

int wt_optimizer_create(wt_state *s, const uint8_t *model, size_t len, wt_optimizer **out);
void wt_optimizer_free(wt_optimizer *o);
/* Updates every trainable parameter from its gradient (one fused pass) and advances the step.
 * An error when no train step computed gradients since the last step or lazy reset (an eval step
 * computes none), or when the last train step's loss was not finite. */
int wt_optimizer_step(wt_optimizer *o);
int wt_optimizer_set_lr(wt_optimizer *o, float lr);
float wt_optimizer_get_lr(const wt_optimizer *o);
/* LinearLRScheduler: sets lr = initial_lr * factor(step) now, step being the optimizer's step count
 * (the checkpoint's, after a reload: the schedule resumes); each scheduler step recomputes it for the
 * optimizer's current step count, as in ONNX Runtime. */
int wt_optimizer_set_linear_scheduler(wt_optimizer *o, int64_t warmup_steps, int64_t total_steps,
                                      float initial_lr);
int wt_optimizer_scheduler_step(wt_optimizer *o);

#ifdef __cplusplus
}
#endif

#endif
