/* A checkpoint of the trainable parameters alone (LoRA adapters, a new head: small), saved from
 * a state and loaded back into one holding the same frozen base. */
#ifndef WT_RUNTIME_STATE_PART_H
#define WT_RUNTIME_STATE_PART_H

#include <stddef.h>
#include <stdint.h>

#include "webtrain.h"

/* The string property a trainable-only checkpoint records the frozen parameters' fingerprint in. */
#define WT_BASE_FINGERPRINT "webtrain.base_fingerprint"
/* ... and the one of the weights a module over the state held by reference (external data). */
#define WT_BASE_WEIGHTS_FINGERPRINT "webtrain.base_weights_fingerprint"

/* A checkpoint (ODTC) of s's trainable parameters (and their optimizer state when asked), its
 * properties, and the fingerprint of its frozen parameters (names, shapes, values). */
int wt_state_save_trainable(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len);
/* Copies the parameters a checkpoint holds into s: each must be a parameter of s of the same
 * type and shape, trainable ones trainable; a fingerprint it records must be s's (the same
 * frozen base). Its properties are added (replacing those of the same name). An .onnx_adapter
 * file (io/adapter.h) is read the same way (names and shapes checked; it records no base).
 * All or nothing: on error s is unchanged. */
int wt_state_load_params(wt_state *s, const uint8_t *bytes, size_t len);

#endif
