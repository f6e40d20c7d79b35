/* Data-movement kernels on raw bytes: strided copies (transpose, slice, broadcast, tile) and
 * fills. They work on element size (1, 4 or 8 bytes), never on element type, so every dtype
 * shares one code path. Strides are in elements and may be 0 (broadcast) or negative. */
#ifndef WT_KERNELS_COPY_H
#define WT_KERNELS_COPY_H

#include <stddef.h>
#include <stdint.h>

/* Rank limit of the strided copy (tile views use twice the tensor rank). */
#define WT_COPY_MAX_RANK 16

/* For every index tuple i over dims[0..rank):
 *   dst[sum i_k * dst_strides[k]] = src[sum i_k * src_strides[k]]   (elements of `elem` bytes).
 * Fast paths: contiguous inner rows are memcpy'd, an inner 2-D transpose is tiled.
 * The destination elements must not overlap each other or the source. */
void wt_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                     const int64_t *src_strides, int rank, const int64_t *dims, size_t elem);

/* dst = src with axes permuted: dst dims[i] = in_dims[perm[i]]. */
void wt_transpose(void *dst, const void *src, int rank, const int64_t *in_dims, const int *perm,
                  size_t elem);

/* Writes n copies of the `elem`-byte value. */
void wt_fill(void *dst, int64_t n, const void *value, size_t elem);

/* dst[i] += src[i] for i < n (float32, SIMD): the accumulation of scatter-add gradients. */
void wt_add_f32(float *dst, const float *src, int64_t n);

/* memcpy that accepts n == 0 with NULL pointers. */
void wt_copy_bytes(void *dst, const void *src, size_t n);

#endif
