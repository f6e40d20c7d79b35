/* Replaces the allocation functions of the process with counting wrappers over glibc's own
 * (__libc_*): every thread's allocations are counted while counting is on. */
#include "alloc_count.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static atomic_int counting;
static atomic_long count;

static void note(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&count, 1);
}

void wt_alloc_count_start(void) {
  atomic_store(&count, 0);
  atomic_store(&counting, 1);
}

long wt_alloc_count_stop(void) {
  atomic_store(&counting, 0);
  return atomic_load(&count);
}

void *malloc(size_t n) {
  note();
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
  note();
  return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
  note();
  return __libc_realloc(p, n);
}

void free(void *p) { __libc_free(p); }

void *memalign(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
  note();
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
