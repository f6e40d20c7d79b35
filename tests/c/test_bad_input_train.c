/* The bad-input suite, training: hostile generate_artifacts options, malformed and
 * hostile checkpoints (cut from the base model's generated artifacts) and bad training, optimizer
 * and export calls, each with the status and the exact error text expected. Nothing may crash,
 * leak or trip a sanitizer. The harness (arena, protobuf-c builders, the base model, g_art) is
 * bad_input_harness.h; the ONNX model cases are test_bad_input.c.
 *
 * A case returns a status; the table says which status and which substring of wt_last_error()
 * are expected (code 0: the call must succeed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_input_harness.h"
#include "io/checkpoint.h"

/* Under AddressSanitizer, an allocation the machine cannot satisfy returns NULL (as malloc does
 * natively and in wasm) instead of aborting, as in test_bad_input.c: an allocation a hostile
 * input asks for must end in an error, the same in every build. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ==== the cases ============================================================================ */

/* -- generate_artifacts options -- */
static int c_rg_unknown(void) { return gen_with((const char *[]){"W", "nope"}, 2, NULL, 0); }
static int c_rg_typo(void) { return gen_with((const char *[]){"w"}, 1, NULL, 0); }
/* The base model as exported in eval mode with constant folding: its weights are Constant nodes. */
static int c_no_float_initializers(void) {
  model *b = base_model();
  b->g.n_initializer = 0;
  Onnx__NodeProto *w = node("Constant", "w", 0, NULL, 1, (const char *[]){"W"});
  attr(w, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = tensor("", WT_FLOAT, 2, (int64_t[]){4, 3}, W_DATA);
  Onnx__NodeProto *bias = node("Constant", "b", 0, NULL, 1, (const char *[]){"B"});
  attr(bias, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = tensor("", WT_FLOAT, 1, (int64_t[]){3}, B_DATA);
  Onnx__NodeProto **nodes = A(sizeof *nodes * 4);
  nodes[0] = w, nodes[1] = bias, nodes[2] = b->g.node[0], nodes[3] = b->g.node[1];
  b->g.node = nodes;
  b->g.n_node = 4;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(b, &o);
}
/* ... or whose folded weights became initializers with names PyTorch made up. */
static model *anonymous_weights(void) {
  model *b = base_model();
  b->g.initializer[0]->name = S("onnx::MatMul_7");
  b->g.initializer[1]->name = S("onnx::Add_8");
  b->g.node[0]->input[1] = S("onnx::MatMul_7");
  b->g.node[1]->input[1] = S("onnx::Add_8");
  return b;
}
static int c_anonymous_initializers(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_anonymous_initializers_named(void) {
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"fc.weight"}, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_anonymous_initializers_listed(void) {
  /* naming them in requires_grad is a deliberate choice: it trains */
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"onnx::MatMul_7", "onnx::Add_8"}, .n_requires_grad = 2,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(anonymous_weights(), &o);
}
static int c_frozen_unknown(void) { return gen_with(NULL, 0, (const char *[]){"ghost"}, 1); }
static int c_rg_frozen_overlap(void) { return gen_with((const char *[]){"W", "B"}, 2, (const char *[]){"B"}, 1); }
static int c_rg_input_not_param(void) { return gen_with((const char *[]){"X"}, 1, NULL, 0); }
static int c_rg_int_param(void) {
  model *b = base_model();
  PUSH(b->g.n_initializer, b->g.initializer, tensor("K", WT_INT64, 1, (int64_t[]){1}, (int64_t[]){1}));
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"K"}, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  return gen(b, &o);
}
static int c_rg_duplicate(void) { return gen_with((const char *[]){"W", "W"}, 2, NULL, 0); }
static int c_ort_format(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .ort_format = 1};
  return gen(base_model(), &o);
}
static int c_custom_op_library(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .custom_op_library = "libcustom.so"};
  return gen(base_model(), &o);
}
static int c_additional_output_unknown(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .additional_output_names = (const char *[]){"nope"},
                         .n_additional_outputs = 1};
  return gen(base_model(), &o);
}
static int c_loss_input_unknown(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .loss_input_names = (const char *[]){"nope"},
                         .n_loss_inputs = 1};
  return gen(base_model(), &o);
}
static int c_loss_two_inputs(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .loss_input_names = (const char *[]){"Y", "H"},
                         .n_loss_inputs = 2};
  return gen(base_model(), &o);
}
static int c_loss_bad_reduction(void) {
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE, .reduction = "median"}};
  return gen(base_model(), &o);
}
static int c_loss_int_output(void) {
  model *b = base_model();
  PUSH(b->g.n_node, b->g.node, node("Cast", "cast", 1, (const char *[]){"Y"}, 1, (const char *[]){"Yi"}));
  Onnx__AttributeProto *to = attr(b->g.node[2], "to", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  to->has_i = 1;
  to->i = WT_INT64;
  b->g.output[0] = value_info("Yi", WT_INT64, -1, NULL, NULL);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}
static int c_loss_name_taken(void) {
  /* the MSE target input is called "target": a model value of that name collides */
  model *b = base_model();
  b->g.node[1]->output[0] = S("target");
  b->g.output[0] = value_info("target", WT_FLOAT, 2, (int64_t[]){0, 3}, (const char *[]){"batch", NULL});
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}
/* The hidden value H renamed to a name the training model must give to something of its own. */
static int gen_hidden_named(const char *name) {
  model *b = base_model();
  b->g.node[0]->output[0] = S(name);
  b->g.node[1]->input[0] = S(name);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(b, &o);
}
static int c_name_taken_buffer(void) { return gen_hidden_named("W_grad.accumulation.buffer"); }
static int c_name_taken_acc_out(void) { return gen_hidden_named("B_grad.accumulation.out"); }
static int c_name_taken_reset(void) { return gen_hidden_named("lazy_reset_grad"); }
static int c_name_taken_grad(void) { return gen_hidden_named("W_grad"); }
static int c_param_unused(void) {
  model *b = base_model();
  PUSH(b->g.n_initializer, b->g.initializer, tensor("U", WT_FLOAT, 1, (int64_t[]){3}, B_DATA));
  wt_artifacts_opts o = {.requires_grad = (const char *[]){"W", "U"}, .n_requires_grad = 2,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return gen(b, &o);
}
static int c_artifacts_garbage(void) {
  static const uint8_t junk[] = {0x08, 0x80};
  wt_artifacts a;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return wt_generate_artifacts(junk, sizeof junk, &o, &a);
}
static int c_artifacts_no_outputs(void) {
  model *b = base_model();
  b->g.n_output = 0;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}};
  return gen(b, &o);
}

/* -- checkpoints -- */
static int c_ckpt_empty(void) { return load_ckpt((const uint8_t *)"", 0); }
static int c_ckpt_truncated_header(void) { return load_ckpt(g_art.checkpoint.data, 6); }
static int c_ckpt_truncated_half(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len / 2); }
static int c_ckpt_truncated_last(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len - 1); }
static int c_ckpt_truncated_3_4(void) { return load_ckpt(g_art.checkpoint.data, g_art.checkpoint.len * 3 / 4); }
static int c_ckpt_identifier(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  memcpy(c + 4, "ORTM", 4);
  return load_ckpt(c, len);
}
static int c_ckpt_onnx_bytes(void) { return load_ckpt(g_art.eval_model.data, g_art.eval_model.len); }
static int c_ckpt_root_offset(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  wr32(c, 0x7ffffff0u);
  return load_ckpt(c, len);
}
static int c_ckpt_root_unaligned(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  wr32(c, (uint32_t)len - 2);
  return load_ckpt(c, len);
}
static int c_ckpt_vtable_offset(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  uint32_t root = rd32(c);
  wr32(c + root, 0x80000000u); /* vtable far outside the buffer */
  return load_ckpt(c, len);
}
/* Loads a copy of the generated checkpoint whose root table's field `id` (`what`) holds v. */
static int ckpt_root_field(int id, const char *what, uint32_t v) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  uint32_t at = fb_field(c, rd32(c), id);
  if (!at) return wt_errorf(WT_ERR_INTERNAL, "no %s field", what);
  wr32(c + at, v);
  return load_ckpt(c, len);
}
static int c_ckpt_version(void) { return ckpt_root_field(0, "version", 7); }
static int c_ckpt_module_state_offset(void) { return ckpt_root_field(1, "module_state", 0xfffffff0u); }
/* Every single-bit flip in the first 512 bytes (the tables, vtables, names and shapes): each
 * either loads or fails with a message; whatever loads also saves. */
static int c_ckpt_bitflips(void) {
  size_t len;
  uint8_t *c = ckpt_copy(&len);
  size_t n = len < 512 ? len : 512;
  int failures = 0;
  for (size_t i = 0; i < n; i++)
    for (int bit = 0; bit < 8; bit++) {
      c[i] ^= (uint8_t)(1u << bit);
      wt_state *s = NULL;
      int rc = wt_state_load(c, len, &s);
      if (rc && !wt_last_error()[0]) failures++;
      if (!rc) {
        uint8_t *out;
        size_t out_len;
        if (wt_state_save(s, 1, &out, &out_len) == WT_OK) wt_free(out);
      }
      wt_state_free(s);
      c[i] ^= (uint8_t)(1u << bit);
    }
  return failures ? wt_errorf(WT_ERR_INTERNAL, "%d flips failed without a message", failures) : WT_OK;
}
/* Writes a version-2 checkpoint of n trainable tensors; with `load`, loads what was written. */
static int write_ckpt(wt_const_tensor *t, int n, int load) {
  wt_checkpoint c = {.version = 2, .n_trainable = n, .trainable = t};
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_checkpoint_write(&c, 0, &out, &len);
  if (!rc && load) rc = load_ckpt(out, len);
  free(out);
  return rc;
}
static int c_ckpt_write_rank_9(void) {
  wt_const_tensor t = {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 9, .dims = {1}}};
  return write_ckpt(&t, 1, 0);
}
static int c_ckpt_write_negative_dim(void) {
  float d[1] = {0};
  wt_const_tensor t = {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {-1}, .data = d}};
  return write_ckpt(&t, 1, 0);
}
static int c_ckpt_write_no_name(void) {
  float d[1] = {0};
  wt_const_tensor t = {.name = NULL, .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}};
  return write_ckpt(&t, 1, 0);
}
static int c_ckpt_duplicate_param(void) {
  float d[1] = {0};
  wt_const_tensor t[2] = {{.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}},
                          {.name = "p", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {1}, .data = d}}};
  return write_ckpt(t, 2, 1);
}
static int c_ckpt_nominal_train(void) {
  /* a nominal checkpoint has no parameter values: loading it as a training state is refused */
  model *b = base_model();
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts a;
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD},
                         .nominal_checkpoint = 1};
  WT_TRY(wt_generate_artifacts(bytes, len, &o, &a));
  wt_state *s = NULL;
  int rc = wt_state_load(a.nominal_checkpoint.data, a.nominal_checkpoint.len, &s);
  wt_state_free(s);
  wt_artifacts_free(&a);
  return rc;
}

/* -- the training runtime -- */
static int other_artifacts(int64_t hidden, wt_artifacts *a) {
  model *b = base_model();
  b->g.initializer[0] = tensor("W", WT_FLOAT, 2, (int64_t[]){4, hidden}, NULL);
  b->g.initializer[1] = tensor("B", WT_FLOAT, 1, (int64_t[]){hidden}, NULL);
  b->g.output[0] = value_info("Y", WT_FLOAT, 2, (int64_t[]){0, hidden}, (const char *[]){"batch", NULL});
  size_t len;
  uint8_t *bytes = pack(b, &len);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  return wt_generate_artifacts(bytes, len, &o, a);
}
static int c_ckpt_model_shape_mismatch(void) {
  /* the checkpoint of a 4x5 model with the training model of the 4x3 one (refused at create;
   * a train step would also refuse it) */
  wt_artifacts other;
  WT_TRY(other_artifacts(5, &other));
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(other.checkpoint.data, other.checkpoint.len, &s);
  if (!rc) rc = wt_module_create(s, g_art.training_model.data, g_art.training_model.len,
                                 g_art.eval_model.data, g_art.eval_model.len, &m);
  if (!rc) {
    train_run r = {s, m, NULL};
    rc = train_step(&r, 2, 4, 0.5f, WT_FLOAT);
  }
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&other);
  return rc;
}
/* Writes checkpoint c, loads it and creates a module on the test model's training graph (and
 * with `step`, runs one train step): the status of the first call that fails. */
static int module_from_checkpoint(const wt_checkpoint *c, int step) {
  uint8_t *bytes = NULL;
  size_t len;
  WT_TRY(wt_checkpoint_write(c, 0, &bytes, &len));
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(bytes, len, &s);
  if (!rc) rc = wt_module_create(s, g_art.training_model.data, g_art.training_model.len, NULL, 0, &m);
  if (!rc && step) {
    train_run r = {s, m, NULL};
    rc = train_step(&r, 2, 4, 0.5f, WT_FLOAT);
  }
  wt_module_free(m);
  wt_state_free(s);
  free(bytes);
  return rc;
}
static int c_ckpt_missing_param(void) {
  /* a checkpoint without 'B': the training model's input 'B' is then unbound */
  float w[12] = {0};
  wt_const_tensor t = {.name = "W", .t = {.dtype = WT_FLOAT, .rank = 2, .dims = {4, 3}, .data = w}};
  wt_checkpoint c = {.version = 2, .n_trainable = 1, .trainable = &t};
  return module_from_checkpoint(&c, 1);
}
static int c_ckpt_param_dtype(void) {
  /* 'W' stored as int64 in the checkpoint */
  int64_t w[12] = {0};
  float bb[3] = {0};
  wt_const_tensor t[2] = {{.name = "W", .t = {.dtype = WT_INT64, .rank = 2, .dims = {4, 3}, .data = w}},
                          {.name = "B", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {3}, .data = bb}}};
  wt_checkpoint c = {.version = 2, .n_frozen = 1, .frozen = t, .n_trainable = 1, .trainable = t + 1};
  return module_from_checkpoint(&c, 0);
}
static int c_ckpt_frozen_but_trained(void) {
  /* 'W' frozen in the checkpoint, but the training model accumulates its gradient */
  float w[12] = {0}, bb[3] = {0};
  wt_const_tensor t[2] = {{.name = "W", .t = {.dtype = WT_FLOAT, .rank = 2, .dims = {4, 3}, .data = w}},
                          {.name = "B", .t = {.dtype = WT_FLOAT, .rank = 1, .dims = {3}, .data = bb}}};
  wt_checkpoint c = {.version = 2, .n_frozen = 1, .frozen = t, .n_trainable = 1, .trainable = t + 1};
  return module_from_checkpoint(&c, 0);
}
static int c_module_bad_training_bytes(void) {
  wt_state *s = NULL;
  wt_module *m = NULL;
  int rc = wt_state_load(g_art.checkpoint.data, g_art.checkpoint.len, &s);
  if (!rc) rc = wt_module_create(s, g_art.checkpoint.data, g_art.checkpoint.len, NULL, 0, &m);
  wt_module_free(m);
  wt_state_free(s);
  return rc;
}
static int c_optimizer_model_is_eval(void) {
  wt_state *s = NULL;
  wt_optimizer *o = NULL;
  int rc = wt_state_load(g_art.checkpoint.data, g_art.checkpoint.len, &s);
  if (!rc) rc = wt_optimizer_create(s, g_art.eval_model.data, g_art.eval_model.len, &o);
  wt_optimizer_free(o);
  wt_state_free(s);
  return rc;
}
static int with_run(int (*fn)(train_run *)) {
  train_run r;
  int rc = open_run(&r, &g_art);
  if (!rc) rc = fn(&r);
  close_run(&r);
  return rc;
}
static int r_wrong_shape(train_run *r) { return train_step(r, 2, 5, 0.5f, WT_FLOAT); }
static int c_train_wrong_shape(void) { return with_run(r_wrong_shape); }
static int r_wrong_dtype(train_run *r) { return train_step(r, 2, 4, 0.5f, WT_INT64); }
static int c_train_wrong_dtype(void) { return with_run(r_wrong_dtype); }
static int r_batch_mismatch(train_run *r) {
  float x[3 * 4] = {0}, t[2 * 3] = {0};
  WT_TRY(wt_module_set_input(r->m, 0, 0, WT_FLOAT, 2, (int64_t[]){3, 4}, x));
  WT_TRY(wt_module_set_input(r->m, 0, 1, WT_FLOAT, 2, (int64_t[]){2, 3}, t));
  return wt_module_train_step(r->m);
}
static int c_train_batch_mismatch(void) { return with_run(r_batch_mismatch); }
static int r_input_index(train_run *r) {
  float x[8] = {0};
  return wt_module_set_input(r->m, 0, 7, WT_FLOAT, 2, (int64_t[]){2, 4}, x);
}
static int c_train_input_index(void) { return with_run(r_input_index); }
static int r_nan_loss(train_run *r) {
  /* NaN inputs: the step reports the NaN loss, the optimizer does not apply its gradients (the
   * parameters stay as they were), and the next good batch trains */
  float before[15], after[15];
  if (wt_state_params_size(r->s, 0) != 15) return wt_errorf(WT_ERR_INTERNAL, "expected 15 parameters");
  WT_TRY(wt_state_params_copy_to(r->s, 0, before, 15));
  int rc = train_step(r, 2, 4, NAN, WT_FLOAT);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", wt_last_error());
  (void)wt_optimizer_step(r->o);
  WT_TRY(wt_state_params_copy_to(r->s, 0, after, 15));
  if (memcmp(before, after, sizeof before) != 0)
    return wt_errorf(WT_ERR_INTERNAL, "a NaN step changed the parameters");
  WT_TRY(wt_module_lazy_reset_grad(r->m));
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  WT_TRY(wt_optimizer_step(r->o));
  return rc ? wt_errorf(rc, "%s", msg) : WT_OK;
}
static int c_train_nan_input(void) { return with_run(r_nan_loss); }
static int r_output_before_step(train_run *r) {
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  return wt_module_output(r->m, 0, 0, &dt, &rank, &dims, &data);
}
static int c_train_output_before_step(void) { return with_run(r_output_before_step); }
static int r_bad_lr(train_run *r) { return wt_optimizer_set_lr(r->o, NAN); }
static int c_optimizer_nan_lr(void) { return with_run(r_bad_lr); }
static int r_param_update_count(train_run *r) {
  float v[5] = {0};
  return wt_state_param_update(r->s, wt_state_param_index(r->s, "W"), v, 5);
}
static int c_param_update_count(void) { return with_run(r_param_update_count); }
static int r_param_update_index(train_run *r) {
  float v[5] = {0};
  return wt_state_param_update(r->s, 99, v, 5);
}
static int c_param_update_index(void) { return with_run(r_param_update_index); }
static int r_params_copy_count(train_run *r) {
  float v[4];
  return wt_state_params_copy_to(r->s, 0, v, 4);
}
static int c_params_copy_count(void) { return with_run(r_params_copy_count); }
static int r_property_no_name(train_run *r) { return wt_state_set_int_property(r->s, "", 1); }
static int c_property_no_name(void) { return with_run(r_property_no_name); }
static int r_export_unknown(train_run *r) {
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_module_export_for_inference(r->m, (const char *[]){"nope"}, 1, &out, &len);
  wt_free(out);
  return rc;
}
static int c_export_unknown_output(void) { return with_run(r_export_unknown); }
static int r_export_none(train_run *r) {
  uint8_t *out = NULL;
  size_t len;
  int rc = wt_module_export_for_inference(r->m, NULL, 0, &out, &len);
  wt_free(out);
  return rc;
}
static int c_export_no_outputs(void) { return with_run(r_export_none); }
static int r_step_no_run(train_run *r) { return wt_optimizer_step(r->o); }
static int c_step_no_run(void) { return with_run(r_step_no_run); }
static int r_step_after_reset(train_run *r) {
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  WT_TRY(wt_module_lazy_reset_grad(r->m));
  return wt_optimizer_step(r->o);
}
static int c_step_after_reset(void) { return with_run(r_step_after_reset); }
static int r_step_twice(train_run *r) {
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  WT_TRY(wt_optimizer_step(r->o));
  return wt_optimizer_step(r->o);
}
static int c_step_twice(void) { return with_run(r_step_twice); }
static int r_predict_unknown(train_run *r) { return wt_module_predict_outputs(r->m, (const char *[]){"nope"}, 1); }
static int c_predict_unknown_output(void) { return with_run(r_predict_unknown); }
static int r_predict_unchosen(train_run *r) { return wt_module_predict_step(r->m); }
static int c_predict_unchosen(void) { return with_run(r_predict_unchosen); }
static int r_recover(train_run *r) {
  /* a failed step (wrong shape) leaves the module usable */
  if (train_step(r, 2, 5, 0.5f, WT_FLOAT) == WT_OK) return wt_errorf(WT_ERR_INTERNAL, "bad step passed");
  WT_TRY(train_step(r, 2, 4, 0.5f, WT_FLOAT));
  return wt_optimizer_step(r->o);
}
static int c_train_recovers(void) { return with_run(r_recover); }

/* ==== the table ============================================================================ */

static const bad_case CASES[] = {
  /* generate_artifacts */
  {"artifacts/requires-grad-unknown", c_rg_unknown, WT_ERR_INVALID_ARG, "requires_grad: 'nope' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/requires-grad-typo", c_rg_typo, WT_ERR_INVALID_ARG, "requires_grad: 'w' is not an initializer (parameter) of the model; did you mean 'W'? (parameters: W, B)"},
  {"artifacts/frozen-unknown", c_frozen_unknown, WT_ERR_INVALID_ARG, "frozen_params: 'ghost' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/no-float-initializers", c_no_float_initializers, WT_ERR_INVALID_ARG, "generate_artifacts: the model has no float initializers to train (only Constant nodes): its weights were folded into constants (exported in eval mode or with constant folding?); export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"},
  {"artifacts/anonymous-initializers", c_anonymous_initializers, WT_ERR_INVALID_ARG, "the model's 2 float initializers all have made-up names such as 'onnx::MatMul_7': its weights were folded into anonymous constants (exported in eval mode or with constant folding?); export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False), or name the ones to train in requires_grad"},
  {"artifacts/anonymous-initializers-named", c_anonymous_initializers_named, WT_ERR_INVALID_ARG, "requires_grad: 'fc.weight' is not an initializer (parameter) of the model (parameters: onnx::MatMul_7, onnx::Add_8); these are anonymous constants, not named weights: export it for training: torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"},
  {"artifacts/anonymous-initializers-listed", c_anonymous_initializers_listed, WT_OK, ""},
  {"artifacts/requires-grad-frozen-overlap", c_rg_frozen_overlap, WT_ERR_INVALID_ARG, "parameter 'B' is listed in both requires_grad and frozen_params"},
  {"artifacts/requires-grad-input", c_rg_input_not_param, WT_ERR_INVALID_ARG, "requires_grad: 'X' is not an initializer (parameter) of the model (parameters: W, B)"},
  {"artifacts/requires-grad-int64", c_rg_int_param, WT_ERR_INVALID_ARG, "requires_grad: parameter 'K' is int64; only float parameters can be trained"},
  {"artifacts/requires-grad-duplicate", c_rg_duplicate, WT_OK, ""},
  {"artifacts/ort-format", c_ort_format, WT_ERR_UNSUPPORTED, "ort_format: webtrain writes ONNX artifacts only (ORT format is not supported)"},
  {"artifacts/custom-op-library", c_custom_op_library, WT_ERR_UNSUPPORTED, "custom_op_library: custom op libraries are not supported"},
  {"artifacts/additional-output-unknown", c_additional_output_unknown, WT_ERR_INVALID_ARG, "additional_output_names: 'nope' is not a value of the model"},
  {"artifacts/loss-input-unknown", c_loss_input_unknown, WT_ERR_INVALID_ARG, "loss_input_names: 'nope' is not a value of the model"},
  {"artifacts/loss-two-inputs", c_loss_two_inputs, WT_ERR_INVALID_ARG, "a built-in loss takes one model output; 2 loss_input_names were given"},
  {"artifacts/loss-reduction", c_loss_bad_reduction, WT_ERR_INVALID_ARG, "loss reduction 'median': expected mean, sum or none"},
  {"artifacts/loss-int-output", c_loss_int_output, WT_ERR_INVALID_ARG, "the loss input 'Yi' must be a float tensor of known rank"},
  {"artifacts/loss-name-taken", c_loss_name_taken, WT_ERR_INVALID_ARG, "but the model already has a value of that name"},
  {"artifacts/name-taken-accumulation-buffer", c_name_taken_buffer, WT_ERR_INVALID_ARG, "generate_artifacts: the model already has a value named 'W_grad.accumulation.buffer', the name ONNX Runtime's convention gives the gradient accumulation buffer of parameter W; rename that value in the model and export it again"},
  {"artifacts/name-taken-accumulation-out", c_name_taken_acc_out, WT_ERR_INVALID_ARG, "the model already has a value named 'B_grad.accumulation.out', the name ONNX Runtime's convention gives the gradient accumulator's output of parameter B; rename that value"},
  {"artifacts/name-taken-lazy-reset-grad", c_name_taken_reset, WT_ERR_INVALID_ARG, "the model already has a value named 'lazy_reset_grad', the name ONNX Runtime's convention gives the flag that resets gradient accumulation; rename that value"},
  {"artifacts/name-taken-grad (internal: renamed)", c_name_taken_grad, WT_OK, ""},
  {"artifacts/param-unused", c_param_unused, WT_ERR_INVALID_ARG, "the loss does not depend on parameter 'U' (list it in frozen_params instead of requires_grad)"},
  {"artifacts/garbage", c_artifacts_garbage, WT_ERR_PARSE, "generate_artifacts: not a valid ONNX model"},
  {"artifacts/no-outputs", c_artifacts_no_outputs, WT_ERR_INVALID_ARG, "the model has no output to compute a loss from"},
  /* checkpoints */
  {"checkpoint/empty", c_ckpt_empty, WT_ERR_PARSE, "truncated or corrupt checkpoint: 0 bytes, expected at least 8 (0 bytes is too short for a flatbuffer"},
  {"checkpoint/truncated-header", c_ckpt_truncated_header, WT_ERR_PARSE, "truncated or corrupt checkpoint: 6 bytes, expected at least 8 (6 bytes is too short for a flatbuffer"},
  {"checkpoint/truncated-half", c_ckpt_truncated_half, WT_ERR_PARSE, "truncated or corrupt checkpoint: 116 bytes, expected at least 180 (tensor #0 of module_state.requires_grad_params: offset is zero or points past the end (at byte 48 of 116))"},
  {"checkpoint/truncated-last-byte", c_ckpt_truncated_last, WT_ERR_PARSE, "truncated or corrupt checkpoint: 231 bytes, expected at least 232 (tensor 'B': vector of 12 elements (12 bytes) runs past the end"},
  {"checkpoint/truncated-three-quarters", c_ckpt_truncated_3_4, WT_ERR_PARSE, "truncated or corrupt checkpoint: 174 bytes, expected at least 180 ("},
  {"checkpoint/identifier", c_ckpt_identifier, WT_ERR_PARSE, "checkpoint: file identifier is 'ORTM', expected 'ODTC' (not an ONNX Runtime training checkpoint?)"},
  {"checkpoint/onnx-bytes", c_ckpt_onnx_bytes, WT_ERR_PARSE, "checkpoint: file identifier is 'bad_', expected 'ODTC'"},
  {"checkpoint/root-offset", c_ckpt_root_offset, WT_ERR_PARSE, "truncated or corrupt checkpoint: 232 bytes, expected at least 2147483636 (root table: table offset out of bounds or misaligned (at byte 2147483632"},
  {"checkpoint/root-unaligned", c_ckpt_root_unaligned, WT_ERR_PARSE, "checkpoint: root table: table offset out of bounds or misaligned"},
  {"checkpoint/vtable-offset", c_ckpt_vtable_offset, WT_ERR_PARSE, "truncated or corrupt checkpoint: 232 bytes, expected at least 2147483660 (root table: vtable offset out of bounds or misaligned"},
  {"checkpoint/version-7", c_ckpt_version, WT_ERR_UNSUPPORTED, "checkpoint: format version 7 is not supported (webtrain reads versions 1 and 2)"},
  {"checkpoint/module-state-offset", c_ckpt_module_state_offset, WT_ERR_PARSE, "checkpoint: module_state: offset is zero or points past the end"},
  {"checkpoint/bit-flips", c_ckpt_bitflips, WT_OK, ""},
  {"checkpoint/write-rank-9", c_ckpt_write_rank_9, WT_ERR_INVALID_ARG, "checkpoint: tensor 'p' has rank 9"},
  {"checkpoint/write-negative-dim", c_ckpt_write_negative_dim, WT_ERR_INVALID_ARG, "checkpoint: tensor 'p' has a negative dimension"},
  {"checkpoint/write-no-name", c_ckpt_write_no_name, WT_ERR_INVALID_ARG, "checkpoint: a tensor of module_state.requires_grad_params has no name"},
  {"checkpoint/duplicate-param", c_ckpt_duplicate_param, WT_ERR_PARSE, "checkpoint: parameter 'p' appears more than once"},
  {"checkpoint/nominal-train", c_ckpt_nominal_train, WT_ERR_INVALID_ARG, "has no data (a nominal checkpoint cannot be trained from)"},
  /* checkpoint vs model, the training runtime */
  {"train/checkpoint-shape-mismatch", c_ckpt_model_shape_mismatch, WT_ERR_SHAPE, "checkpoint parameter 'W' is float [4,5]; the training model expects float [4,3]"},
  {"train/checkpoint-missing-param", c_ckpt_missing_param, WT_ERR_INVALID_ARG, "training model: input 'B_grad.accumulation.buffer': 'B' is not a trainable parameter of the checkpoint"},
  {"train/checkpoint-param-dtype", c_ckpt_param_dtype, WT_ERR_SHAPE, "checkpoint parameter 'W' is int64 [4,3]; the training model expects float [4,3]"},
  {"train/checkpoint-frozen-but-trained", c_ckpt_frozen_but_trained, WT_ERR_INVALID_ARG, "'W' is not a trainable parameter of the checkpoint"},
  {"train/training-model-bytes", c_module_bad_training_bytes, WT_ERR_PARSE, "training model: not a valid ONNX model"},
  {"train/optimizer-model-is-eval", c_optimizer_model_is_eval, WT_ERR_UNSUPPORTED, "optimizer model: no com.microsoft AdamWOptimizer or SGDOptimizerV2 node"},
  {"train/wrong-shape", c_train_wrong_shape, WT_ERR_SHAPE, "input 'X' has shape [2,5]; expected [batch,4]"},
  {"train/wrong-dtype", c_train_wrong_dtype, WT_ERR_INVALID_ARG, "input 'X' has dtype int64; expected float"},
  {"train/batch-mismatch", c_train_batch_mismatch, WT_ERR_SHAPE, "input 'target' has shape [2,3]; expected [batch,3]"},
  {"train/input-index", c_train_input_index, WT_ERR_INVALID_ARG, "input index 7 is out of range (2 inputs)"},
  {"train/nan-input-nan-loss", c_train_nan_input, WT_ERR_RUNTIME, "the loss is NaN at this train step"},
  {"train/output-before-step", c_train_output_before_step, WT_ERR_INVALID_ARG, "no train step has run yet"},
  {"train/nan-learning-rate", c_optimizer_nan_lr, WT_ERR_INVALID_ARG, "learning rate nan: expected a number >= 0"},
  {"train/param-update-count", c_param_update_count, WT_ERR_INVALID_ARG, "parameter 'W' holds 12 float values; 5 were given"},
  {"train/param-update-index", c_param_update_index, WT_ERR_INVALID_ARG, "parameter index 99 is out of range"},
  {"train/params-copy-count", c_params_copy_count, WT_ERR_INVALID_ARG, "the parameter buffer holds 4 floats; the"},
  {"train/property-no-name", c_property_no_name, WT_ERR_INVALID_ARG, "a property needs a name"},
  {"train/export-unknown-output", c_export_unknown_output, WT_ERR_INVALID_ARG, "export: 'nope' is not a value of the eval model"},
  {"train/export-no-outputs", c_export_no_outputs, WT_ERR_INVALID_ARG, "name at least one output to export"},
  {"train/step-before-any-run", c_step_no_run, WT_ERR_INVALID_ARG, "no gradients to apply: no train step ran since the last optimizer step"},
  {"train/step-after-lazy-reset", c_step_after_reset, WT_ERR_INVALID_ARG, "no gradients to apply"},
  {"train/step-twice-after-one-run", c_step_twice, WT_ERR_INVALID_ARG, "no gradients to apply"},
  {"train/predict-unknown-output", c_predict_unknown_output, WT_ERR_INVALID_ARG, "predict: 'nope' is not a value of the eval model"},
  {"train/predict-no-outputs-chosen", c_predict_unchosen, WT_ERR_INVALID_ARG, "predict: no outputs were chosen"},
  {"train/recovers-after-error", c_train_recovers, WT_OK, ""},
};

int main(int argc, char **argv) {
  return bad_input_main(argc, argv, CASES, (int)(sizeof CASES / sizeof CASES[0]));
}
