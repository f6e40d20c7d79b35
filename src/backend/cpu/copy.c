/* Strided copy / transpose / fill kernels on raw bytes (see copy.h).
 * The strided copy first drops size-1 axes and merges axes that are contiguous in both source
 * and destination, so most real layouts reduce to a few long memcpy rows or one tiled 2-D
 * transpose (e.g. attention's [N,T,H,D] -> [N,H,T,D] becomes rows of D elements). */
#include "backend/cpu/copy.h"

#include <string.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"

#define TILE 16

void wt_copy_bytes(void *dst, const void *src, size_t n) {
  if (n && dst != src) memcpy(dst, src, n);
}

void wt_add_f32(float *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(dst + i, wt_f32x4_add(wt_f32x4_load(dst + i), wt_f32x4_load(src + i)));
  for (; i < n; i++) dst[i] += src[i];
}

void wt_fill(void *dst, int64_t n, const void *value, size_t elem) {
  if (n <= 0) return;
  unsigned char *d = dst;
  if (elem == 1) {
    memset(d, *(const unsigned char *)value, (size_t)n);
    return;
  }
  /* Doubling copies: log2(n) memcpy calls instead of n small ones. */
  size_t total = (size_t)n * elem, done = elem;
  memcpy(d, value, elem);
  while (done < total) {
    size_t k = done < total - done ? done : total - done;
    memcpy(d + done, d, k);
    done += k;
  }
}

/* One row: n elements, byte strides ds/ss. Fixed-size memcpy compiles to a plain load/store
 * without breaking strict aliasing. */
static void copy_row(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t elem) {
  if (ss == 0 && ds == (int64_t)elem) {
    wt_fill(d, n, s, elem);
    return;
  }
  switch (elem) {
    case 1:
      for (int64_t j = 0; j < n; j++) d[j * ds] = s[j * ss];
      break;
    case 4:
      for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + j * ss, 4);
      break;
    case 8:
      for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + j * ss, 8);
      break;
    default:
      for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + j * ss, elem);
      break;
  }
}

/* memcpy of one contiguous run. Short runs (attention's head rows: 64 floats, thousands per
 * transpose) go through 16-byte vector moves: Emscripten's memcpy copies 4-byte words below
 * 512 bytes and calls out to JavaScript from there. Measured on [R, 64] f32 rows: 1.75x when
 * the data is in L2, 1.2x from L3. Bytes are moved as bits (the vector moves never convert). */
static void copy_run(char *d, const char *s, size_t bytes) {
  /* (float pointers must be float-aligned even though the vector moves do not need it) */
  if (bytes > 1024 || ((uintptr_t)d | (uintptr_t)s) % sizeof(float)) {
    memcpy(d, s, bytes);
    return;
  }
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16)
    wt_f32x4_store((float *)(void *)(d + i), wt_f32x4_load((const float *)(const void *)(s + i)));
  if (i < bytes) memcpy(d + i, s + i, bytes - i);
}

/* dst[i*dsr + j*elem] = src[i*elem + j*ssc] for i < R, j < C, in cache-sized tiles. */
#define TILE_BODY(SZ)                                                         \
  for (int64_t i0 = 0; i0 < R; i0 += TILE) {                                  \
    int64_t i1 = i0 + TILE < R ? i0 + TILE : R;                               \
    for (int64_t j0 = 0; j0 < C; j0 += TILE) {                                \
      int64_t j1 = j0 + TILE < C ? j0 + TILE : C;                             \
      for (int64_t i = i0; i < i1; i++)                                       \
        for (int64_t j = j0; j < j1; j++)                                     \
          memcpy(d + i * dsr + j * (SZ), s + i * (SZ) + j * ssc, (SZ));       \
    }                                                                         \
  }

/* The 4-byte case of tile_2d in 4 x 4 register blocks: four source rows (fixed j, i running)
 * are loaded as vectors and transposed with two rounds of even/odd shuffles, so each element
 * costs a quarter of a load and store instead of one scalar move each (attention's head
 * transposes and their gradients). Any 4-byte dtype comes here: the vector loads/stores and
 * the memcpy edges move bits without reading them as floats. */
/* 32 x 32 tiles (4 KiB read + 4 KiB written, in L1): measured 15% faster than 16 and 64 on
 * attention's [128, 64] and [128, 128] planes. */
#define TILE_F32 32
static void tile_2d_f32(float *d, int64_t dsr, const float *s, int64_t ssc, int64_t R, int64_t C) {
  for (int64_t i0 = 0; i0 < R; i0 += TILE_F32) {
    int64_t i1 = i0 + TILE_F32 < R ? i0 + TILE_F32 : R;
    for (int64_t j0 = 0; j0 < C; j0 += TILE_F32) {
      int64_t j1 = j0 + TILE_F32 < C ? j0 + TILE_F32 : C;
      int64_t i = i0;
      for (; i + 4 <= i1; i += 4) {
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4) {
          const float *p = s + i + j * ssc;
          wt_f32x4 r0 = wt_f32x4_load(p), r1 = wt_f32x4_load(p + ssc);
          wt_f32x4 r2 = wt_f32x4_load(p + 2 * ssc), r3 = wt_f32x4_load(p + 3 * ssc);
          wt_f32x4 t0 = wt_f32x4_even(r0, r1), t1 = wt_f32x4_odd(r0, r1);
          wt_f32x4 t2 = wt_f32x4_even(r2, r3), t3 = wt_f32x4_odd(r2, r3);
          float *q = d + i * dsr + j;
          wt_f32x4_store(q, wt_f32x4_even(t0, t2));
          wt_f32x4_store(q + dsr, wt_f32x4_even(t1, t3));
          wt_f32x4_store(q + 2 * dsr, wt_f32x4_odd(t0, t2));
          wt_f32x4_store(q + 3 * dsr, wt_f32x4_odd(t1, t3));
        }
        for (; j < j1; j++)
          for (int64_t k = 0; k < 4; k++) memcpy(d + (i + k) * dsr + j, s + i + k + j * ssc, 4);
      }
      for (; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) memcpy(d + i * dsr + j, s + i + j * ssc, 4);
    }
  }
}

static void tile_2d(char *d, int64_t dsr, const char *s, int64_t ssc, int64_t R, int64_t C,
                    size_t elem) {
  switch (elem) {
    case 1: TILE_BODY(1) break;
    case 4:
      /* Strides are whole elements when the buffers are 4-byte aligned (every tensor is). */
      if (((uintptr_t)d | (uintptr_t)s | (uint64_t)dsr | (uint64_t)ssc) % 4 == 0) {
        tile_2d_f32((float *)(void *)d, dsr / 4, (const float *)(const void *)s, ssc / 4, R, C);
        break;
      }
      TILE_BODY(4)
      break;
    case 8: TILE_BODY(8) break;
    default: TILE_BODY(elem) break;
  }
}

/* A strided copy reduced to `outer` loop axes around its inner kernel (a run, a row or a tiled
 * 2-D transpose over the last two axes), cut into units for the pool: one per outer index, or,
 * for a tiled transpose, one per outer index and band of TILE_F32 source-contiguous rows (a
 * batch of two images' channel permutes is two transposes of 100k elements each). */
typedef struct copy_job {
  char *d;
  const char *s;
  int64_t n[WT_COPY_MAX_RANK], ds[WT_COPY_MAX_RANK], ss[WT_COPY_MAX_RANK]; /* strides in bytes */
  int r, outer, tiled, contiguous;
  size_t elem;
  int64_t bands;        /* units per outer index */
} copy_job;

/* Units [u0, u0 + count): u = outer index * bands + band. */
static void copy_units(void *ctx, int64_t u0, int64_t count) {
  const copy_job *j = ctx;
  const int64_t *n = j->n, *ds = j->ds, *ss = j->ss;
  int r = j->r, outer = j->outer;
  int64_t it = u0 / j->bands, band = u0 % j->bands, idx[WT_COPY_MAX_RANK], doff = 0, soff = 0;
  for (int k = outer - 1; k >= 0; k--) { /* the outer index's digits and offsets */
    idx[k] = it % n[k];
    it /= n[k];
    doff += idx[k] * ds[k];
    soff += idx[k] * ss[k];
  }
  for (int64_t u = 0; u < count; u++) {
    if (j->tiled) {
      int64_t i0 = band * TILE_F32, rows = n[r - 2] - i0 < TILE_F32 ? n[r - 2] - i0 : TILE_F32;
      tile_2d(j->d + doff + i0 * ds[r - 2], ds[r - 2], j->s + soff + i0 * (int64_t)j->elem, ss[r - 1],
              rows, n[r - 1], j->elem);
    } else if (j->contiguous) {
      copy_run(j->d + doff, j->s + soff, (size_t)n[r - 1] * j->elem);
    } else {
      copy_row(j->d + doff, ds[r - 1], j->s + soff, ss[r - 1], n[r - 1], j->elem);
    }
    if (++band < j->bands) continue;
    band = 0;
    for (int k = outer - 1; k >= 0; k--) {
      doff += ds[k];
      soff += ss[k];
      if (++idx[k] < n[k]) break;
      doff -= ds[k] * n[k];
      soff -= ss[k] * n[k];
      idx[k] = 0;
    }
  }
}

/* Copies of at least this many bytes split over the pool's threads, in blocks of about
 * COPY_BLOCK_BYTES (a copy moves each byte once: only big ones gain from a second core). */
#define COPY_THREAD_MIN_BYTES ((int64_t)256 * 1024)
#define COPY_BLOCK_BYTES ((int64_t)64 * 1024)

static void move_axis_last(int64_t *n, int64_t *ds, int64_t *ss, int a, int last) {
  int64_t tn = n[a], td = ds[a], ts = ss[a];
  for (int k = a; k < last; k++) {
    n[k] = n[k + 1];
    ds[k] = ds[k + 1];
    ss[k] = ss[k + 1];
  }
  n[last] = tn;
  ds[last] = td;
  ss[last] = ts;
}

void wt_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                     const int64_t *src_strides, int rank, const int64_t *dims, size_t elem) {
  copy_job j = {.d = dst, .s = src, .elem = elem, .bands = 1};
  int64_t *n = j.n, *ds = j.ds, *ss = j.ss;
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] <= 0) return;
    if (dims[k] == 1) continue;
    if (r > 0 && ds[r - 1] == dst_strides[k] * dims[k] && ss[r - 1] == src_strides[k] * dims[k]) {
      /* Previous (outer) axis steps exactly over this one in both tensors: merge. */
      n[r - 1] *= dims[k];
      ds[r - 1] = dst_strides[k];
      ss[r - 1] = src_strides[k];
      continue;
    }
    n[r] = dims[k];
    ds[r] = dst_strides[k];
    ss[r] = src_strides[k];
    r++;
  }
  if (r == 0) {
    memcpy(dst, src, elem);
    return;
  }
  /* Loop order is free: the destination's contiguous axis innermost (writes in order; a
   * channel permute [N,C,HW] -> [N,HW,C] has it in the middle), then the source's next to it. */
  if (r >= 2 && ds[r - 1] != 1)
    for (int a = r - 2; a >= 0; a--)
      if (ds[a] == 1) {
        move_axis_last(n, ds, ss, a, r - 1);
        break;
      }
  int inner = 1; /* axes handled by the inner kernel */
  if (r >= 2 && ds[r - 1] == 1 && ss[r - 1] != 1)
    for (int a = r - 2; a >= 0; a--)
      if (ss[a] == 1) {
        move_axis_last(n, ds, ss, a, r - 2);
        inner = 2;
        j.tiled = 1;
        break;
      }
  for (int k = 0; k < r; k++) {
    ds[k] *= (int64_t)elem;
    ss[k] *= (int64_t)elem;
  }
  j.r = r;
  j.outer = r - inner;
  j.contiguous = ds[r - 1] == (int64_t)elem && ss[r - 1] == (int64_t)elem;
  int64_t count = 1;
  for (int k = 0; k < j.outer; k++) count *= n[k];
  int64_t unit = n[r - 1] * (int64_t)elem;
  if (j.tiled) {
    j.bands = (n[r - 2] + TILE_F32 - 1) / TILE_F32;
    unit *= n[r - 2] < TILE_F32 ? n[r - 2] : TILE_F32;
  }
  int64_t units = count * j.bands, per = COPY_BLOCK_BYTES / unit > 1 ? COPY_BLOCK_BYTES / unit : 1;
  wt_parallel_range(units, per, (COPY_THREAD_MIN_BYTES + unit - 1) / unit, copy_units, &j);
}

void wt_transpose(void *dst, const void *src, int rank, const int64_t *in_dims, const int *perm,
                  size_t elem) {
  int64_t in_str[WT_COPY_MAX_RANK], dims[WT_COPY_MAX_RANK], ss[WT_COPY_MAX_RANK],
      dstr[WT_COPY_MAX_RANK];
  int64_t st = 1;
  for (int k = rank - 1; k >= 0; k--) {
    in_str[k] = st;
    st *= in_dims[k];
  }
  for (int k = 0; k < rank; k++) {
    dims[k] = in_dims[perm[k]];
    ss[k] = in_str[perm[k]];
  }
  st = 1;
  for (int k = rank - 1; k >= 0; k--) {
    dstr[k] = st;
    st *= dims[k];
  }
  wt_copy_strided(dst, dstr, src, ss, rank, dims, elem);
}
