/* The GEMM's packing buffers: the running thread's inner scratch from the pool (base/pool.h),
 * made when the pool starts, so no step allocates them. The calling thread's belong to the
 * thread holding the pool. Their contents never outlive a product, so no module's state is in
 * them. */
#include "base/pool.h"
#include "backend/cpu/gemm_tile.h"

_Static_assert(sizeof(float) * (MC * KC + KC * NC) <= WT_POOL_SCRATCH_BYTES,
               "GEMM packing buffers fit in a pool thread's scratch");

void wt_gemm_thread_buffers(int32_t thread, float **pa, float **pb) {
  float *s = wt_pool_scratch(thread);
  *pa = s;
  *pb = s + MC * KC; /* MC * KC floats: a multiple of 16, so still 64-byte aligned */
}
