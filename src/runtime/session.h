/* Internal session entry points for the training runtime. */
#ifndef WT_RUNTIME_SESSION_H
#define WT_RUNTIME_SESSION_H

#include <stdint.h>

#include "ir/ir.h"
#include "backend/cpu/gemm_prepack.h"
#include "webtrain.h"

/* Limits up front: a plan whose weights, inputs and activations pass this many bytes fails
 * before its arena is allocated (0: the build's maximum memory; tests set less). */
void wt_session_memory_limit_set(uint64_t bytes);
/* The most bytes the heap can hold (wasm32: the build's maximum memory, or the test's limit set
 * above; natively 1 TiB unless set), and the bytes malloc'd now (natively 0: not tracked). */
uint64_t wt_session_memory_limit(void);
uint64_t wt_session_heap_in_use(void);
/* A mallinfo() field (an int) as the bytes it counts: wasm32 heaps pass 2 GiB (a 1B-parameter
 * float16 base), where the int is negative; read as unsigned up to the 4 GiB the build holds. */
static inline uint64_t wt_mallinfo_bytes(int field) { return (uint64_t)(unsigned)field; }

/* A session over g, which it takes ownership of (freed even on error). */
int wt_session_create_from_graph(wt_graph *g, wt_session **out);
const wt_graph *wt_session_graph(const wt_session *s);
/* The session's next random draw number, counted (ops/exec.h): a run made elsewhere (on the GPU)
 * draws its Dropout masks in step order through this, as the session's own runs do. */
uint64_t wt_session_next_draw(wt_session *s);
/* Its draws so far, and setting them back (a run made elsewhere that is taken back). */
uint64_t wt_session_draws(const wt_session *s);
void wt_session_set_draws(wt_session *s, uint64_t draws);
/* The table of frozen weights packed once that the session's runs read (backend/cpu/
 * gemm_prepack.h; its owner's, which outlives the session); NULL: none. */
void wt_session_set_prepack(wt_session *s, wt_prepack *t);
/* dst's plans use src's activation arena from now on (one arena, grown to the largest plan of
 * either): for sessions that never run at the same time, like a module's training and eval
 * models. A run of either invalidates the other's outputs (wt_session_output then says so). */
int wt_session_share_arena(wt_session *dst, wt_session *src);
/* Bytes of the arena this session's plans run in (shared ones counted once per arena). */
size_t wt_session_arena_capacity(const wt_session *s);
/* True when a plan for the inputs set now is cached (a run builds none). */
int wt_session_planned(const wt_session *s);
/* Input k as last set; NULL when not set. */
const wt_tensor *wt_session_input(const wt_session *s, int k);
/* Builds and caches the plan a run would use, for the inputs set now with inputs index[0..n)
 * replaced by tensors[0..n) (their data is read only where values determine shapes); the
 * session's inputs stay as they were, no arena is allocated and nothing runs. */
int wt_session_prepare(wt_session *s, int n, const int *index, const wt_tensor *tensors);
/* Plans cached. */
int wt_session_plan_count(const wt_session *s);
/* The largest live-bytes peak of the session's plans (activations + scratch a perfect layout
 * would need). wt_session_arena_bytes (webtrain.h) is the sum of the plans' arena layouts. */
size_t wt_session_live_peak_bytes(const wt_session *s);
/* For a training graph: the bytes of forward values that the backward pass reads (arena values
 * alive when its first gradient node runs, and those of the user inputs, graph input indices
 * user_inputs[0..n_user), that it reads), in the last run's plan; 0 for other graphs. */
size_t wt_session_saved_bytes(const wt_session *s, int n_user, const int *user_inputs);

/* A module's memory, for reports: its one activation arena, the live peaks of the training
 * [0] and eval [1] plans, the forward activations its backward pass reads (saved), and the
 * state's parameter, gradient and optimizer-moment bytes. */
typedef struct wt_module_mem {
  size_t arena, live_peak[2], saved, params, grads, moments, packed;
} wt_module_mem;
void wt_module_memory(const wt_module *m, wt_module_mem *out);

#endif
