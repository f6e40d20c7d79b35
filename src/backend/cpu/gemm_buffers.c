/* The GEMM's packing buffers: the calling thread's are static (no allocation in a step), a pool
 * worker's are its scratch, allocated when the pool starts. The caller's are the process's for
 * the reason the pool is (base/pool.h), and held under the same rule: one thread runs GEMMs at
 * a time, as one job runs on the pool at a time. Their contents never outlive a product, so no
 * module's state is in them. */
#include "base/pool.h"
#include "backend/cpu/gemm_tile.h"

/* 64-byte aligned for cache lines; 16-byte alignment is all the vector loads need. */
static _Alignas(64) float g_pack_a[MC * KC];
static _Alignas(64) float g_pack_b[KC * NC];

_Static_assert(sizeof(float) * (MC * KC + KC * NC) <= WT_POOL_SCRATCH_BYTES,
               "GEMM packing buffers fit in a pool thread's scratch");

void wt_gemm_thread_buffers(int32_t thread, float **pa, float **pb) {
  float *s = thread > 0 ? (float *)wt_pool_scratch(thread) : NULL;
  if (!s) {
    *pa = g_pack_a;
    *pb = g_pack_b;
    return;
  }
  *pa = s;
  *pb = s + MC * KC; /* MC * KC floats: a multiple of 16, so still 64-byte aligned */
}
