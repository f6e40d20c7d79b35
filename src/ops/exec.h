/* What a plan's steps see besides their values: the state and settings that belong to whoever
 * runs the plan (a session, the module over it), never to the process, so that two modules,
 * or a test beside a module, cannot reach each other's. Kernels take what they need of it as
 * arguments; an op finds it in ctx->exec (infer and run), which is NULL where no session runs
 * the op (the shape inference of a model, constant folding, op unit tests): then nothing is
 * prepacked and every setting has its default. The thread pool is a handle here too; the pool
 * itself is the process's (base/pool.h says why). */
#ifndef WT_OPS_EXEC_H
#define WT_OPS_EXEC_H

#include <stddef.h>
#include <stdint.h>

/* The settings are the CPU backend's; the ops layer carries them without knowing their types. */
struct wt_prepack;
struct wt_pool;

typedef struct wt_exec {
  /* Frozen weights packed once, of the module running the plan (backend/cpu/gemm_prepack.h);
   * NULL: every product packs its operands itself. */
  struct wt_prepack *prepack;
  /* Where 3x3 convolutions take the Winograd path (WT_WINOGRAD_*, backend/cpu/conv_winograd.h;
   * 0 is its default): fixed when a plan is built, since the step's scratch depends on it. */
  int winograd;
  /* Random draws made so far by the runner's steps (Dropout's masks, one draw a call): the
   * counter mixed into each draw's seed, so that successive steps draw fresh masks while one
   * runner's sequence, from its start, reproduces exactly whatever else the process runs.
   * NULL: every call draws as the first. */
  uint64_t *draws;
  /* The thread pool the steps' kernels split their work over (base/pool.h): the runner holds it
   * while its plan runs. NULL: the process's. */
  struct wt_pool *pool;
} wt_exec;

static inline int wt_exec_winograd(const wt_exec *e) { return e ? e->winograd : 0; }
static inline struct wt_prepack *wt_exec_prepack(const wt_exec *e) { return e ? e->prepack : NULL; }
/* The runner's next draw number (and counts it). */
static inline uint64_t wt_exec_draw(const wt_exec *e) { return e && e->draws ? (*e->draws)++ : 0; }

static inline uint64_t wt_splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Dropout's key for a draw: element i of the mask keeps when the top 24 bits of
 * wt_splitmix64(key + i), as a fraction of 2^24, are at least the ratio. Every backend draws
 * through this (the WebGPU one hashes on the GPU with the key the core gives each run). */
static inline uint64_t wt_dropout_key(uint64_t seed, uint64_t draw) { return wt_splitmix64(seed ^ wt_splitmix64(draw)); }

#endif
